BEGIN TRANSACTION;
CREATE TABLE "_migrations" (
   "name" TEXT PRIMARY KEY,
   "applied_at" TEXT
);
INSERT INTO "_migrations" VALUES('m001_initial','2026-11-23T06:04:13.476+00:00');
CREATE TABLE "documents" (
   "id" TEXT PRIMARY KEY,
   "title" TEXT,
   "source" TEXT,
   "author" TEXT,
   "words" INTEGER,
   "paragraphs" INTEGER,
   "meta" TEXT,
   "created_at" TEXT
);
INSERT INTO "documents" VALUES('ad86c8880241','Off Course (opening)','','',515,30,'{}','2026-11-23T06:04:13.477+00:00');
CREATE TABLE "llm_calls" (
   "id" INTEGER PRIMARY KEY,
   "run_id" INTEGER,
   "doc_id" TEXT,
   "step" TEXT,
   "model" TEXT,
   "backend" TEXT,
   "prompt" TEXT,
   "reply" TEXT,
   "params" TEXT,
   "cache_key" TEXT,
   "cached" INTEGER,
   "duration_ms" INTEGER,
   "input_tokens" INTEGER,
   "output_tokens" INTEGER,
   "attempts" INTEGER,
   "retry_errors" TEXT,
   "error" TEXT,
   "created_at" TEXT
);
CREATE TABLE "memories" (
   "id" INTEGER PRIMARY KEY,
   "doc_id" TEXT REFERENCES "documents"("id"),
   "engine" TEXT,
   "engine_label" TEXT,
   "model" TEXT,
   "preset" TEXT,
   "min_words" INTEGER,
   "max_words" INTEGER,
   "hard_breaks" INTEGER,
   "settings" TEXT,
   "settings_key" TEXT,
   "status" TEXT,
   "origin" TEXT,
   "pages" INTEGER,
   "words" INTEGER,
   "gist_words" INTEGER,
   "compression_rate" REAL,
   "run_id" INTEGER,
   "created_at" TEXT,
   "finished_at" TEXT
);
CREATE TABLE "pages" (
   "memory_id" INTEGER REFERENCES "memories"("id"),
   "start" INTEGER,
   "end" INTEGER,
   "words" INTEGER,
   "break_by" TEXT,
   "break_reason" TEXT,
   "gist" TEXT,
   "gist_words" INTEGER,
   "gist_by" TEXT,
   PRIMARY KEY ("memory_id", "start")
);
CREATE TABLE "paragraphs" (
   "doc_id" TEXT REFERENCES "documents"("id"),
   "idx" INTEGER,
   "text" TEXT,
   "words" INTEGER,
   "heading" INTEGER,
   PRIMARY KEY ("doc_id", "idx")
);
INSERT INTO "paragraphs" VALUES('ad86c8880241',0,'OFF COURSE ***',3,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',1,'Produced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net',14,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',2,'[Illustration]',1,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',3,'_Shure and begorra, it was a great day for the Earth! The first envoy from another world was about to speak--that is, if he could forget that horse for a minute...._',31,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',4,'off course',2,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',5,'By Mack Reynolds',3,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',6,'Illustrated by Kelly Freas',4,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',7,'First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident.',57,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',8,'Patrolman Dermott shook his head. "They''re gettin'' queerer looking every year. Get a load of it--no wheels, no propeller, no cockpit."',21,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',9,'They left the car and made their way toward the strange egg-shaped vessel.',13,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',10,'Tim Casey loosened his .38 in its holster and said, "Sure, and I''m beginning to wonder if it''s one of ours. No insignia and--"',24,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',11,'A circular door slid open at that point and Dameri Tass stepped out, yawning. He spotted them, smiled and said, "Glork."',21,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',12,'They gaped at him.',4,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',13,'"Glork is right," Dermott swallowed.',5,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',14,'Tim Casey closed his mouth with an effort. "Do you mind the color of his face?" he blurted.',18,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',15,'"How could I help it?"',5,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',16,'Dameri Tass rubbed a blue-nailed pink hand down his purplish countenance and yawned again. "Gorra manigan horp soratium," he said.',20,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',17,'Patrolman Dermott and Patrolman Casey shot stares at each other. "''Tis double talk he''s after givin'' us," Casey said.',19,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',18,'Dameri Tass frowned. "Harama?" he asked.',6,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',19,'Larry Dermott pushed his cap to the back of his head. "That doesn''t sound like any language I''ve even _heard_ about."',21,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',20,'Dameri Tass grimaced, turned and reentered his spacecraft to emerge in half a minute with his hands full of contraption. He held a box-like arrangement under his left arm; in his right hand were two metal caps connected to the box by wires.',43,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',21,'While the patrolmen watched him, he set the box on the ground, twirled two dials and put one of the caps on his head. He offered the other to Larry Dermott; his desire was obvious.',35,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',22,'Trained to grasp a situation and immediately respond in manner best suited to protect the welfare of the people of New York State, Dermott cleared his throat and said, "Tim, take over while I report."',35,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',23,'"Hey!" Casey protested, but his fellow minion had left.',9,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',24,'"Mandaia," Dameri Tass told Casey, holding out the metal cap.',10,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',25,'"Faith, an'' do I look balmy?" Casey told him. "I wouldn''t be puttin'' that dingus on my head for all the colleens in Ireland."',24,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',26,'"Mandaia," the stranger said impatiently.',5,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',27,'"Bejasus," Casey snorted, "ye can''t--"',5,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',28,'Dermott called from the car, "Tim, the captain says to humor this guy. We''re to keep him here until the officials arrive."',22,0);
INSERT INTO "paragraphs" VALUES('ad86c8880241',29,'Tim Casey closed his eyes and groaned. "Humor him, he''s after sayin''. Orders it is." He shouted back, "Sure, an'' did ye tell ''em he''s in technicolor? Begorra, he looks like a man from Mars."',35,0);
CREATE TABLE "runs" (
   "id" INTEGER PRIMARY KEY,
   "kind" TEXT,
   "doc_id" TEXT,
   "memory_id" INTEGER,
   "method" TEXT,
   "engine" TEXT,
   "engine_label" TEXT,
   "model" TEXT,
   "question" TEXT,
   "options" TEXT,
   "params" TEXT,
   "status" TEXT,
   "result" TEXT,
   "error" TEXT,
   "started_at" TEXT,
   "finished_at" TEXT,
   "seconds" REAL
);
CREATE TABLE "steps" (
   "id" INTEGER PRIMARY KEY,
   "run_id" INTEGER REFERENCES "runs"("id"),
   "seq" INTEGER,
   "step" TEXT,
   "outcome" TEXT,
   "page" INTEGER,
   "data" TEXT,
   "seconds" REAL,
   "created_at" TEXT
);
CREATE INDEX "idx_memories_doc_id_settings_key"
    ON "memories" ("doc_id", "settings_key");
CREATE INDEX "idx_runs_doc_id"
    ON "runs" ("doc_id");
CREATE INDEX "idx_steps_run_id_seq"
    ON "steps" ("run_id", "seq");
CREATE INDEX "idx_llm_calls_cache_key"
    ON "llm_calls" ("cache_key");
CREATE INDEX "idx_llm_calls_run_id"
    ON "llm_calls" ("run_id");
COMMIT;
