BEGIN TRANSACTION;
CREATE TABLE "_migrations" (
   "name" TEXT PRIMARY KEY,
   "applied_at" TEXT
);
INSERT INTO "_migrations" VALUES('m001_initial','2026-11-23T06:04:10.056+00:00');
INSERT INTO "_migrations" VALUES('m002_memwalker_trees','2026-11-23T06:04:10.057+00:00');
INSERT INTO "_migrations" VALUES('m004_evaluation','2026-11-23T06:04:10.057+00:00');
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
INSERT INTO "documents" VALUES('ad86c8880241','Off Course (opening)','small.txt','',515,30,'{}','2026-11-23T06:04:10.058+00:00');
CREATE TABLE "eval_results" (
   "id" INTEGER PRIMARY KEY,
   "eval_id" INTEGER REFERENCES "runs"("id"),
   "run_index" INTEGER,
   "doc_id" TEXT,
   "question_id" TEXT,
   "method" TEXT,
   "ask_run_id" INTEGER,
   "question" TEXT,
   "options" TEXT,
   "gold" TEXT,
   "references_" TEXT,
   "answer" TEXT,
   "choice" TEXT,
   "correct" INTEGER,
   "rating" TEXT,
   "rouge1" REAL,
   "rouge2" REAL,
   "rougeL" REAL,
   "compression_rate" REAL,
   "lookups" INTEGER,
   "pages_looked_up" TEXT,
   "response_words" INTEGER,
   "words_consumed" INTEGER,
   "llm_calls" INTEGER,
   "fallbacks" INTEGER,
   "answered" INTEGER,
   "error" TEXT,
   "meta" TEXT,
   "created_at" TEXT
);
CREATE TABLE "labels" (
   "id" INTEGER PRIMARY KEY,
   "result_id" INTEGER REFERENCES "eval_results"("id"),
   "annotator" TEXT,
   "category" TEXT,
   "note" TEXT,
   "updated_at" TEXT
);
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
INSERT INTO "memories" VALUES(1,'ad86c8880241','offline','Offline engine (no LLM)',NULL,'quality',280,600,1,'{"preset": "quality", "min_words": 280, "max_words": 600, "hard_breaks": true, "preceding_words": null, "short_tail_words": 350}','bf7e228a65c0cb4a','complete','built',1,515,77,85.05,1,'2026-11-23T06:04:10.059+00:00','2026-11-23T06:04:10.063+00:00');
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
INSERT INTO "pages" VALUES(1,0,30,515,'offline','vocabulary changes most here (cohesion 0.00, depth 0.35); end of section','Produced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net [Illustration] Illustrated by Kelly Freas First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident. "Hey!"',77,'offline');
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
INSERT INTO "runs" VALUES(1,'build','ad86c8880241',1,NULL,'offline','Offline engine (no LLM)',NULL,NULL,NULL,'{"preset": "quality", "min_words": 280, "max_words": 600, "hard_breaks": true, "preceding_words": null, "short_tail_words": 350, "concurrency": 8, "resumed": false}','done','{"doc_id": "ad86c8880241", "title": "Off Course (opening)", "words": 515, "pages": 1, "gist_words": 77, "compression_rate": 85.05, "llm_calls": 0, "cached_calls": 0, "fallback_breaks": 0, "seconds": 0.005, "memory_id": 1, "run_id": 1, "engine": "offline", "engine_label": "Offline engine (no LLM)", "preset": "quality", "min_words": 280, "max_words": 600, "hard_breaks": true, "reused": false, "prompt_words": 0, "input_tokens": 0, "output_tokens": 0, "fallback_gists": 0}',NULL,'2026-11-23T06:04:10.059+00:00','2026-11-23T06:04:10.063+00:00',0.005);
INSERT INTO "runs" VALUES(2,'ask','ad86c8880241',1,'readagent-p','offline','Offline engine (no LLM)',NULL,'Why did Dameron come to Earth?','[]','{"max_pages": 5}','done','{"run_id": 2, "method": "readagent-p", "method_label": "ReadAgent-P", "engine": "offline", "engine_label": "Offline engine (no LLM)", "doc_id": "ad86c8880241", "title": "Off Course (opening)", "question": "Why did Dameron come to Earth?", "options": [], "answer": "Produced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net [Illustration] Illustrated by Kelly Freas First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty", "choice": null, "pages_looked_up": [], "expanded": [], "lookups": 0, "words_in_context": 77, "document_words": 515, "compression_rate": 85.05, "llm_calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0, "prompt_words": 0, "seconds": 0.078, "params": {"max_pages": 5}, "memory_id": 1, "memory_label": "Offline engine (no LLM)", "context": "<Page 0>\nProduced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net [Illustration] Illustrated by Kelly Freas First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident. \"Hey!\"", "extra": {}}',NULL,'2026-11-23T06:04:10.599+00:00','2026-11-23T06:04:10.677+00:00',0.078);
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
INSERT INTO "steps" VALUES(1,1,0,'pagination','offline',NULL,'{"step": "pagination", "outcome": "offline", "value": 30, "attempts": [], "fallback": "", "detail": {"labels": [20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30], "window": [0, 30], "reason": "vocabulary changes most here (cohesion 0.00, depth 0.35); end of section", "scores": [{"label": 20, "score": 0.8231, "cohesion": 0.2645, "depth": 0.0876, "cues": []}, {"label": 21, "score": 0.6479, "cohesion": 0.3521, "depth": 0.0, "cues": []}, {"label": 22, "score": 0.8154, "cohesion": 0.2684, "depth": 0.0838, "cues": []}, {"label": 23, "score": 1.0197, "cohesion": 0.1763, "depth": 0.196, "cues": []}, {"label": 24, "score": 0.9961, "cohesion": 0.1841, "depth": 0.1803, "cues": []}, {"label": 25, "score": 1.0212, "cohesion": 0.1758, "depth": 0.197, "cues": []}, {"label": 26, "score": 1.0222, "cohesion": 0.1755, "depth": 0.1976, "cues": []}, {"label": 27, "score": 1.0556, "cohesion": 0.1643, "depth": 0.2199, "cues": []}, {"label": 28, "score": 1.2032, "cohesion": 0.1818, "depth": 0.185, "cues": ["dialogue ends"]}, {"label": 29, "score": 0.9593, "cohesion": 0.1964, "depth": 0.1557, "cues": []}, {"label": 30, "score": 2.3521, "cohesion": 0.0, "depth": 0.3521, "cues": ["end of section"]}]}, "seconds": 0.0011, "page": null}',0.0011,'2026-11-23T06:04:10.060+00:00');
INSERT INTO "steps" VALUES(2,1,1,'gist','offline',NULL,'{"step": "gist", "outcome": "offline", "value": "Produced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net [Illustration] Illustrated by Kelly Freas First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident. \"Hey!\"", "attempts": [], "fallback": "", "detail": {"method": "extractive: the most informative sentences, in order", "gist_words": 77, "page_start": 0}, "seconds": 0.0008, "page": null}',0.0008,'2026-11-23T06:04:10.062+00:00');
INSERT INTO "steps" VALUES(3,2,0,'lookup','offline',NULL,'{"step": "lookup", "outcome": "offline", "value": [], "attempts": [], "fallback": "", "detail": {"method": "BM25 of the question and options against the gists; pages scoring at least half the best score", "scores": {"0": 0.0}, "max_pages": 5, "context_words": 77}, "seconds": 0.0758, "page": null}',0.0758,'2026-11-23T06:04:10.676+00:00');
INSERT INTO "steps" VALUES(4,2,1,'answer','offline',NULL,'{"step": "answer", "outcome": "offline", "value": {"text": "Produced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net [Illustration] Illustrated by Kelly Freas First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty", "choice": null}, "attempts": [], "fallback": "", "detail": {"method": "lexical: the two sentences that best cover the question''s words", "sentence": 0, "score": 0, "context_words": 79}, "seconds": 0.0003, "page": null}',0.0003,'2026-11-23T06:04:10.677+00:00');
CREATE TABLE "tree_nodes" (
   "tree_id" INTEGER REFERENCES "trees"("id"),
   "node" INTEGER,
   "level" INTEGER,
   "idx" INTEGER,
   "parent" INTEGER,
   "children" TEXT,
   "start" INTEGER,
   "end" INTEGER,
   "text" TEXT,
   "tokens" INTEGER,
   "summary" TEXT,
   "summary_tokens" INTEGER,
   "summary_by" TEXT,
   PRIMARY KEY ("tree_id", "node")
);
CREATE TABLE "trees" (
   "id" INTEGER PRIMARY KEY,
   "doc_id" TEXT REFERENCES "documents"("id"),
   "memory_id" INTEGER,
   "origin" TEXT,
   "engine" TEXT,
   "engine_label" TEXT,
   "model" TEXT,
   "segment_tokens" INTEGER,
   "max_children" INTEGER,
   "settings" TEXT,
   "settings_key" TEXT,
   "status" TEXT,
   "nodes" INTEGER,
   "leaves" INTEGER,
   "levels" INTEGER,
   "tokens" INTEGER,
   "run_id" INTEGER,
   "created_at" TEXT,
   "finished_at" TEXT
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
CREATE INDEX "idx_trees_doc_id_settings_key"
    ON "trees" ("doc_id", "settings_key");
CREATE UNIQUE INDEX "idx_eval_results_eval_id_run_index_method_question_id"
    ON "eval_results" ("eval_id", "run_index", "method", "question_id");
CREATE UNIQUE INDEX "idx_labels_result_id_annotator"
    ON "labels" ("result_id", "annotator");
COMMIT;
