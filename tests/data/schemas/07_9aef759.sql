BEGIN TRANSACTION;
CREATE TABLE _migrations (name text primary key, applied_at text);
INSERT INTO "_migrations" VALUES('m001_initial','2026-11-24T19:01:42.193+00:00');
INSERT INTO "_migrations" VALUES('m002_memwalker_trees','2026-11-24T19:01:42.194+00:00');
INSERT INTO "_migrations" VALUES('m003_embeddings','2026-11-24T19:01:42.194+00:00');
INSERT INTO "_migrations" VALUES('m004_evaluation','2026-11-24T19:01:42.196+00:00');
INSERT INTO "_migrations" VALUES('m005_run_tracebacks','2026-11-24T19:01:42.196+00:00');
INSERT INTO "_migrations" VALUES('m006_run_owner','2026-11-24T19:01:42.196+00:00');
INSERT INTO "_migrations" VALUES('m007_rejected_replies','2026-11-24T19:01:42.197+00:00');
INSERT INTO "_migrations" VALUES('m008_memory_owner','2026-11-24T19:01:42.197+00:00');
INSERT INTO "_migrations" VALUES('m009_runs_and_results_at_scale','2026-11-24T19:01:42.197+00:00');
INSERT INTO "_migrations" VALUES('m010_page_history','2026-11-24T19:01:42.198+00:00');
INSERT INTO "_migrations" VALUES('m011_call_start_times','2026-11-24T19:01:42.199+00:00');
INSERT INTO "_migrations" VALUES('m012_ask_groups','2026-11-24T19:01:42.199+00:00');
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
INSERT INTO "documents" VALUES('ad86c8880241','Off Course (opening)','small.txt','',515,30,'{}','2026-11-24T19:01:42.201+00:00');
CREATE TABLE "embeddings" (
   "key" TEXT PRIMARY KEY,
   "model" TEXT,
   "backend" TEXT,
   "dims" INTEGER,
   "vector" BLOB,
   "created_at" TEXT
);
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
INSERT INTO "eval_results" VALUES(1,4,0,'ad86c8880241','q1','readagent-p',5,'Who lands?','["A pilot", "An alien"]','B','[]','Answer: (A) A pilot','A',0,NULL,NULL,NULL,NULL,0.0,1,'[0]',4,0,0,0,1,NULL,'{}','2026-11-24T19:01:42.473+00:00');
CREATE TABLE "labels" (
   "id" INTEGER PRIMARY KEY,
   "result_id" INTEGER REFERENCES "eval_results"("id"),
   "annotator" TEXT,
   "category" TEXT,
   "note" TEXT,
   "updated_at" TEXT
);
INSERT INTO "labels" VALUES(1,1,'ann','wrong look-up','a note','2026-11-24T19:01:42.474+00:00');
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
, "rejected" INTEGER, "started_at" TEXT);
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
, "owner" TEXT, "parent_id" INTEGER, "fit_tokens" INTEGER);
INSERT INTO "memories" VALUES(1,'ad86c8880241','offline','Offline engine (no LLM)',NULL,'quality',280,600,1,'{"preset": "quality", "min_words": 280, "max_words": 600, "hard_breaks": true, "preceding_words": null, "short_tail_words": 350}','bf7e228a65c0cb4a','complete','built',1,515,73,85.83,1,'2026-11-24T19:01:42.202+00:00','2026-11-24T19:01:42.211+00:00','vm:6642:493044/3222b68931ae4b5db5cf5cdf9a114226',NULL,NULL);
CREATE TABLE "pages" (
   "memory_id" INTEGER REFERENCES "memories"("id"),
   "start" INTEGER,
   "end" INTEGER,
   "words" INTEGER,
   "break_by" TEXT,
   "break_reason" TEXT,
   "gist" TEXT,
   "gist_words" INTEGER,
   "gist_by" TEXT, "sources" TEXT, "gist_rounds" INTEGER,
   PRIMARY KEY ("memory_id", "start")
);
INSERT INTO "pages" VALUES(1,0,30,515,'offline','vocabulary changes most here (cohesion 0.00, depth 0.35); end of section','[Illustration] First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident. Dameri Tass rubbed a blue-nailed pink hand down his purplish countenance and yawned again. "Hey!"',73,'offline',NULL,NULL);
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
, "traceback" TEXT, "owner" TEXT, "ask_group" TEXT);
INSERT INTO "runs" VALUES(1,'build','ad86c8880241',1,NULL,'offline','Offline engine (no LLM)',NULL,NULL,NULL,'{"preset": "quality", "min_words": 280, "max_words": 600, "hard_breaks": true, "preceding_words": null, "short_tail_words": 350, "concurrency": 8, "resumed": false}','done','{"doc_id": "ad86c8880241", "title": "Off Course (opening)", "words": 515, "pages": 1, "gist_words": 73, "compression_rate": 85.83, "llm_calls": 0, "cached_calls": 0, "fallback_breaks": 0, "seconds": 0.009, "memory_id": 1, "run_id": 1, "engine": "offline", "engine_label": "Offline engine (no LLM)", "preset": "quality", "min_words": 280, "max_words": 600, "hard_breaks": true, "reused": false, "prompt_words": 0, "input_tokens": 0, "output_tokens": 0, "fallback_gists": 0, "fit": null, "conditional": ""}',NULL,'2026-11-24T19:01:42.202+00:00','2026-11-24T19:01:42.211+00:00',0.008,NULL,'vm:6642:493044',NULL);
INSERT INTO "runs" VALUES(2,'ask','ad86c8880241',1,'readagent-p','offline','Offline engine (no LLM)',NULL,'Who lands?','["A pilot", "An alien"]','{"max_pages": 5}','done','{"run_id": 2, "method": "readagent-p", "method_label": "ReadAgent-P", "engine": "offline", "engine_label": "Offline engine (no LLM)", "doc_id": "ad86c8880241", "title": "Off Course (opening)", "question": "Who lands?", "options": ["A pilot", "An alien"], "answer": "Answer: (A) A pilot", "choice": "A", "pages_looked_up": [0], "expanded": [0], "lookups": 1, "words_in_context": 515, "document_words": 515, "compression_rate": 0.0, "llm_calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0, "prompt_words": 0, "seconds": 0.115, "params": {"max_pages": 5}, "memory_id": 1, "memory_label": "Offline engine (no LLM)", "context": "<Page 0>\nOFF COURSE ***\nProduced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net\n[Illustration]\n_Shure and begorra, it was a great day for the Earth! The first envoy from another world was about to speak--that is, if he could forget that horse for a minute...._\noff course\nBy Mack Reynolds\nIllustrated by Kelly Freas\nFirst on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident.\nPatrolman Dermott shook his head. \"They''re gettin'' queerer looking every year. Get a load of it--no wheels, no propeller, no cockpit.\"\nThey left the car and made their way toward the strange egg-shaped vessel.\nTim Casey loosened his .38 in its holster and said, \"Sure, and I''m beginning to wonder if it''s one of ours. No insignia and--\"\nA circular door slid open at that point and Dameri Tass stepped out, yawning. He spotted them, smiled and said, \"Glork.\"\nThey gaped at him.\n\"Glork is right,\" Dermott swallowed.\nTim Casey closed his mouth with an effort. \"Do you mind the color of his face?\" he blurted.\n\"How could I help it?\"\nDameri Tass rubbed a blue-nailed pink hand down his purplish countenance and yawned again. \"Gorra manigan horp soratium,\" he said.\nPatrolman Dermott and Patrolman Casey shot stares at each other. \"''Tis double talk he''s after givin'' us,\" Casey said.\nDameri Tass frowned. \"Harama?\" he asked.\nLarry Dermott pushed his cap to the back of his head. \"That doesn''t sound like any language I''ve even _heard_ about.\"\nDameri Tass grimaced, turned and reentered his spacecraft to emerge in half a minute with his hands full of contraption. He held a box-like arrangement under his left arm; in his right hand were two metal caps connected to the box by wires.\nWhile the patrolmen watched him, he set the box on the ground, twirled two dials and put one of the caps on his head. He offered the other to Larry Dermott; his desire was obvious.\nTrained to grasp a situation and immediately respond in manner best suited to protect the welfare of the people of New York State, Dermott cleared his throat and said, \"Tim, take over while I report.\"\n\"Hey!\" Casey protested, but his fellow minion had left.\n\"Mandaia,\" Dameri Tass told Casey, holding out the metal cap.\n\"Faith, an'' do I look balmy?\" Casey told him. \"I wouldn''t be puttin'' that dingus on my head for all the colleens in Ireland.\"\n\"Mandaia,\" the stranger said impatiently.\n\"Bejasus,\" Casey snorted, \"ye can''t--\"\nDermott called from the car, \"Tim, the captain says to humor this guy. We''re to keep him here until the officials arrive.\"\nTim Casey closed his eyes and groaned. \"Humor him, he''s after sayin''. Orders it is.\" He shouted back, \"Sure, an'' did ye tell ''em he''s in technicolor? Begorra, he looks like a man from Mars.\"", "details": {"pages": [0]}}',NULL,'2026-11-24T19:01:42.212+00:00','2026-11-24T19:01:42.328+00:00',0.115,NULL,'vm:6642:493044',NULL);
INSERT INTO "runs" VALUES(3,'tree','ad86c8880241',NULL,'memwalker','offline','Offline engine (no LLM)',NULL,NULL,NULL,'{"segment_tokens": 200, "max_children": 4, "origin": "segments", "tree_id": 1, "concurrency": 8}','done','{"tree_id": 1, "doc_id": "ad86c8880241", "title": "Off Course (opening)", "origin": "segments", "memory_id": null, "engine": "offline", "engine_label": "Offline engine (no LLM)", "segment_tokens": 200, "max_children": 4, "levels": [{"level": 1, "nodes": 4}, {"level": 2, "nodes": 1}], "nodes": 5, "leaves": 4, "tokens": 751, "summary_tokens": 193, "llm_calls": 0, "cached_calls": 0, "fallback_summaries": 0, "seconds": 0.126, "run_id": 3, "reused": false}',NULL,'2026-11-24T19:01:42.328+00:00','2026-11-24T19:01:42.455+00:00',0.126,NULL,'vm:6642:493044',NULL);
INSERT INTO "runs" VALUES(4,'eval',NULL,NULL,'readagent-p','offline','Offline engine (no LLM)',NULL,'jsonl: 1 questions',NULL,'{"dataset": "jsonl", "path": "small.jsonl", "methods": ["readagent-p"], "runs": 1, "concurrency": 4, "params": {}, "preset": null, "docs": ["ad86c8880241"], "questions": 1, "is_llm": false, "limit_questions": null}','done','{"results": [{"method": "readagent-p", "method_label": "ReadAgent-P", "n": 1, "runs": 1, "engine": "Offline engine (no LLM)", "offline": true, "compression_rate": 0.0, "lookups": 1.0, "response_words": 4.0, "unparseable": 0, "no_answer": 0, "setting": "max pages 5", "memories": 1, "fallback_breaks": 0, "fallback_gists": 0, "errors": 0, "accuracy": 0.0, "accuracy_std": null, "words_consumed": 0, "build_words": 0}]}',NULL,'2026-11-24T19:01:42.469+00:00','2026-11-24T19:01:42.474+00:00',0.004,NULL,'vm:6642:493044',NULL);
INSERT INTO "runs" VALUES(5,'ask','ad86c8880241',1,'readagent-p','offline','Offline engine (no LLM)',NULL,'Who lands?','["A pilot", "An alien"]','{"max_pages": 5}','done','{"run_id": 5, "method": "readagent-p", "method_label": "ReadAgent-P", "engine": "offline", "engine_label": "Offline engine (no LLM)", "doc_id": "ad86c8880241", "title": "Off Course (opening)", "question": "Who lands?", "options": ["A pilot", "An alien"], "answer": "Answer: (A) A pilot", "choice": "A", "pages_looked_up": [0], "expanded": [0], "lookups": 1, "words_in_context": 515, "document_words": 515, "compression_rate": 0.0, "llm_calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0, "prompt_words": 0, "seconds": 0.001, "params": {"max_pages": 5}, "memory_id": 1, "memory_label": "Offline engine (no LLM)", "context": "<Page 0>\nOFF COURSE ***\nProduced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net\n[Illustration]\n_Shure and begorra, it was a great day for the Earth! The first envoy from another world was about to speak--that is, if he could forget that horse for a minute...._\noff course\nBy Mack Reynolds\nIllustrated by Kelly Freas\nFirst on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident.\nPatrolman Dermott shook his head. \"They''re gettin'' queerer looking every year. Get a load of it--no wheels, no propeller, no cockpit.\"\nThey left the car and made their way toward the strange egg-shaped vessel.\nTim Casey loosened his .38 in its holster and said, \"Sure, and I''m beginning to wonder if it''s one of ours. No insignia and--\"\nA circular door slid open at that point and Dameri Tass stepped out, yawning. He spotted them, smiled and said, \"Glork.\"\nThey gaped at him.\n\"Glork is right,\" Dermott swallowed.\nTim Casey closed his mouth with an effort. \"Do you mind the color of his face?\" he blurted.\n\"How could I help it?\"\nDameri Tass rubbed a blue-nailed pink hand down his purplish countenance and yawned again. \"Gorra manigan horp soratium,\" he said.\nPatrolman Dermott and Patrolman Casey shot stares at each other. \"''Tis double talk he''s after givin'' us,\" Casey said.\nDameri Tass frowned. \"Harama?\" he asked.\nLarry Dermott pushed his cap to the back of his head. \"That doesn''t sound like any language I''ve even _heard_ about.\"\nDameri Tass grimaced, turned and reentered his spacecraft to emerge in half a minute with his hands full of contraption. He held a box-like arrangement under his left arm; in his right hand were two metal caps connected to the box by wires.\nWhile the patrolmen watched him, he set the box on the ground, twirled two dials and put one of the caps on his head. He offered the other to Larry Dermott; his desire was obvious.\nTrained to grasp a situation and immediately respond in manner best suited to protect the welfare of the people of New York State, Dermott cleared his throat and said, \"Tim, take over while I report.\"\n\"Hey!\" Casey protested, but his fellow minion had left.\n\"Mandaia,\" Dameri Tass told Casey, holding out the metal cap.\n\"Faith, an'' do I look balmy?\" Casey told him. \"I wouldn''t be puttin'' that dingus on my head for all the colleens in Ireland.\"\n\"Mandaia,\" the stranger said impatiently.\n\"Bejasus,\" Casey snorted, \"ye can''t--\"\nDermott called from the car, \"Tim, the captain says to humor this guy. We''re to keep him here until the officials arrive.\"\nTim Casey closed his eyes and groaned. \"Humor him, he''s after sayin''. Orders it is.\" He shouted back, \"Sure, an'' did ye tell ''em he''s in technicolor? Begorra, he looks like a man from Mars.\"", "details": {"pages": [0]}}',NULL,'2026-11-24T19:01:42.471+00:00','2026-11-24T19:01:42.472+00:00',0.001,NULL,'vm:6642:493044',NULL);
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
INSERT INTO "steps" VALUES(1,1,0,'pagination','offline',NULL,'{"step": "pagination", "outcome": "offline", "value": 30, "attempts": [], "fallback": "", "detail": {"labels": [19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30], "window": [0, 30], "reason": "vocabulary changes most here (cohesion 0.00, depth 0.35); end of section", "scores": [{"label": 19, "score": 1.0138, "cohesion": 0.1692, "depth": 0.183, "cues": []}, {"label": 20, "score": 0.8231, "cohesion": 0.2645, "depth": 0.0876, "cues": []}, {"label": 21, "score": 0.6479, "cohesion": 0.3521, "depth": 0.0, "cues": []}, {"label": 22, "score": 0.8154, "cohesion": 0.2684, "depth": 0.0838, "cues": []}, {"label": 23, "score": 1.0197, "cohesion": 0.1763, "depth": 0.196, "cues": []}, {"label": 24, "score": 0.9961, "cohesion": 0.1841, "depth": 0.1803, "cues": []}, {"label": 25, "score": 1.0212, "cohesion": 0.1758, "depth": 0.197, "cues": []}, {"label": 26, "score": 1.0222, "cohesion": 0.1755, "depth": 0.1976, "cues": []}, {"label": 27, "score": 1.0556, "cohesion": 0.1643, "depth": 0.2199, "cues": []}, {"label": 28, "score": 1.2032, "cohesion": 0.1818, "depth": 0.185, "cues": ["dialogue ends"]}, {"label": 29, "score": 0.9593, "cohesion": 0.1964, "depth": 0.1557, "cues": []}, {"label": 30, "score": 2.3521, "cohesion": 0.0, "depth": 0.3521, "cues": ["end of section"]}]}, "seconds": 0.0024, "page": null}',0.0024,'2026-11-24T19:01:42.206+00:00');
INSERT INTO "steps" VALUES(2,1,1,'gist','offline',NULL,'{"step": "gist", "outcome": "offline", "value": "[Illustration] First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident. Dameri Tass rubbed a blue-nailed pink hand down his purplish countenance and yawned again. \"Hey!\"", "attempts": [], "fallback": "", "detail": {"method": "extractive: the most informative sentences, in order", "gist_words": 73, "page_start": 0}, "seconds": 0.0025, "page": null}',0.0025,'2026-11-24T19:01:42.210+00:00');
INSERT INTO "steps" VALUES(3,2,0,'lookup','offline',NULL,'{"step": "lookup", "outcome": "offline", "value": [0], "attempts": [], "fallback": "", "detail": {"max_pages": 5, "method": "BM25 of the question and options against the gists; pages scoring at least half the best score", "scores": {"0": 0.115}, "context_words": 73}, "seconds": 0.1136, "page": null}',0.1136,'2026-11-24T19:01:42.327+00:00');
INSERT INTO "steps" VALUES(4,2,1,'answer','offline',NULL,'{"step": "answer", "outcome": "offline", "value": {"text": "Answer: (A) A pilot", "choice": "A"}, "attempts": [], "fallback": "", "detail": {"context_words": 517, "method": "lexical sliding window (MCTest): the option whose own words occur together most distinctively in the context", "scores": {"A": 0.0, "B": 0.0}}, "seconds": 0.0005, "page": null}',0.0005,'2026-11-24T19:01:42.327+00:00');
INSERT INTO "steps" VALUES(5,3,0,'leaf-summary','offline',NULL,'{"step": "leaf-summary", "outcome": "offline", "value": "[Illustration] off course First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. \"They''re gettin'' queerer looking every year.", "attempts": [], "fallback": "", "detail": {"method": "extractive: the most informative sentences, in order", "node": 0, "level": 1}, "seconds": 0.0006, "page": null}',0.0006,'2026-11-24T19:01:42.452+00:00');
INSERT INTO "steps" VALUES(6,3,1,'leaf-summary','offline',NULL,'{"step": "leaf-summary", "outcome": "offline", "value": "\"Glork is right,\" Dermott swallowed. Patrolman Dermott and Patrolman Casey shot stares at each other. \"''Tis double talk he''s after givin'' us,\" Casey said.", "attempts": [], "fallback": "", "detail": {"method": "extractive: the most informative sentences, in order", "node": 1, "level": 1}, "seconds": 0.0003, "page": null}',0.0003,'2026-11-24T19:01:42.452+00:00');
INSERT INTO "steps" VALUES(7,3,2,'leaf-summary','offline',NULL,'{"step": "leaf-summary", "outcome": "offline", "value": "Trained to grasp a situation and immediately respond in manner best suited to protect the welfare of the people of New York State, Dermott cleared his throat and said, \"Tim, take over while I report.\"", "attempts": [], "fallback": "", "detail": {"method": "extractive: the most informative sentences, in order", "node": 2, "level": 1}, "seconds": 0.0003, "page": null}',0.0003,'2026-11-24T19:01:42.453+00:00');
INSERT INTO "steps" VALUES(8,3,3,'leaf-summary','offline',NULL,'{"step": "leaf-summary", "outcome": "offline", "value": "\"Mandaia,\" Dameri Tass told Casey, holding out the metal cap. Tim Casey closed his eyes and groaned. Begorra, he looks like a man from Mars.\"", "attempts": [], "fallback": "", "detail": {"method": "extractive: the most informative sentences, in order", "node": 3, "level": 1}, "seconds": 0.0003, "page": null}',0.0003,'2026-11-24T19:01:42.453+00:00');
INSERT INTO "steps" VALUES(9,3,4,'node-summary','offline',NULL,'{"step": "node-summary", "outcome": "offline", "value": "[Illustration] off course First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. \"They''re gettin'' queerer looking every year.", "attempts": [], "fallback": "", "detail": {"method": "extractive: the most informative sentences, in order", "node": 4, "level": 2}, "seconds": 0.0003, "page": null}',0.0003,'2026-11-24T19:01:42.454+00:00');
INSERT INTO "steps" VALUES(10,5,0,'lookup','offline',NULL,'{"step": "lookup", "outcome": "offline", "value": [0], "attempts": [], "fallback": "", "detail": {"max_pages": 5, "method": "BM25 of the question and options against the gists; pages scoring at least half the best score", "scores": {"0": 0.115}, "context_words": 73}, "seconds": 0.0006, "page": null}',0.0006,'2026-11-24T19:01:42.472+00:00');
INSERT INTO "steps" VALUES(11,5,1,'answer','offline',NULL,'{"step": "answer", "outcome": "offline", "value": {"text": "Answer: (A) A pilot", "choice": "A"}, "attempts": [], "fallback": "", "detail": {"context_words": 517, "method": "lexical sliding window (MCTest): the option whose own words occur together most distinctively in the context", "scores": {"A": 0.0, "B": 0.0}}, "seconds": 0.0003, "page": null}',0.0003,'2026-11-24T19:01:42.472+00:00');
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
INSERT INTO "tree_nodes" VALUES(1,0,1,0,4,'[]',0,10,'OFF COURSE ***
Produced by Greg Weeks, Stephen Blundell and the Online Distributed Proofreading Team at http://www.pgdp.net
[Illustration]
_Shure and begorra, it was a great day for the Earth! The first envoy from another world was about to speak--that is, if he could forget that horse for a minute...._
off course
By Mack Reynolds
Illustrated by Kelly Freas
First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. They assumed they were witnessing the crash of a new type of Air Force plane and slipped and skidded desperately across the field to within thirty feet of the strange craft, only to discover that the landing had been made without accident.
Patrolman Dermott shook his head. "They''re gettin'' queerer looking every year. Get a load of it--no wheels, no propeller, no cockpit."
They left the car and made their way toward the strange egg-shaped vessel.',203,'[Illustration] off course First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. "They''re gettin'' queerer looking every year.',36,'offline');
INSERT INTO "tree_nodes" VALUES(1,1,1,1,4,'[]',10,19,'Tim Casey loosened his .38 in its holster and said, "Sure, and I''m beginning to wonder if it''s one of ours. No insignia and--"
A circular door slid open at that point and Dameri Tass stepped out, yawning. He spotted them, smiled and said, "Glork."
They gaped at him.
"Glork is right," Dermott swallowed.
Tim Casey closed his mouth with an effort. "Do you mind the color of his face?" he blurted.
"How could I help it?"
Dameri Tass rubbed a blue-nailed pink hand down his purplish countenance and yawned again. "Gorra manigan horp soratium," he said.
Patrolman Dermott and Patrolman Casey shot stares at each other. "''Tis double talk he''s after givin'' us," Casey said.
Dameri Tass frowned. "Harama?" he asked.',199,'"Glork is right," Dermott swallowed. Patrolman Dermott and Patrolman Casey shot stares at each other. "''Tis double talk he''s after givin'' us," Casey said.',41,'offline');
INSERT INTO "tree_nodes" VALUES(1,2,1,2,4,'[]',19,24,'Larry Dermott pushed his cap to the back of his head. "That doesn''t sound like any language I''ve even _heard_ about."
Dameri Tass grimaced, turned and reentered his spacecraft to emerge in half a minute with his hands full of contraption. He held a box-like arrangement under his left arm; in his right hand were two metal caps connected to the box by wires.
While the patrolmen watched him, he set the box on the ground, twirled two dials and put one of the caps on his head. He offered the other to Larry Dermott; his desire was obvious.
Trained to grasp a situation and immediately respond in manner best suited to protect the welfare of the people of New York State, Dermott cleared his throat and said, "Tim, take over while I report."
"Hey!" Casey protested, but his fellow minion had left.',183,'Trained to grasp a situation and immediately respond in manner best suited to protect the welfare of the people of New York State, Dermott cleared his throat and said, "Tim, take over while I report."',42,'offline');
INSERT INTO "tree_nodes" VALUES(1,3,1,3,4,'[]',24,30,'"Mandaia," Dameri Tass told Casey, holding out the metal cap.
"Faith, an'' do I look balmy?" Casey told him. "I wouldn''t be puttin'' that dingus on my head for all the colleens in Ireland."
"Mandaia," the stranger said impatiently.
"Bejasus," Casey snorted, "ye can''t--"
Dermott called from the car, "Tim, the captain says to humor this guy. We''re to keep him here until the officials arrive."
Tim Casey closed his eyes and groaned. "Humor him, he''s after sayin''. Orders it is." He shouted back, "Sure, an'' did ye tell ''em he''s in technicolor? Begorra, he looks like a man from Mars."',166,'"Mandaia," Dameri Tass told Casey, holding out the metal cap. Tim Casey closed his eyes and groaned. Begorra, he looks like a man from Mars."',38,'offline');
INSERT INTO "tree_nodes" VALUES(1,4,2,0,NULL,'[0, 1, 2, 3]',0,30,NULL,751,'[Illustration] off course First on the scene were Larry Dermott and Tim Casey of the State Highway Patrol. "They''re gettin'' queerer looking every year.',36,'offline');
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
INSERT INTO "trees" VALUES(1,'ad86c8880241',NULL,'segments','offline','Offline engine (no LLM)',NULL,200,4,'{"segment_tokens": 200, "max_children": 4}','0c4355d62c8e0482','complete',5,4,2,751,3,'2026-11-24T19:01:42.328+00:00','2026-11-24T19:01:42.454+00:00');
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
CREATE INDEX "idx_runs_status"
    ON "runs" ("status");
CREATE INDEX "idx_eval_results_ask_run_id"
    ON "eval_results" ("ask_run_id");
CREATE INDEX "idx_eval_results_eval_id_ask_run_id"
    ON "eval_results" ("eval_id", "ask_run_id");
CREATE INDEX "idx_runs_kind_id"
    ON "runs" ("kind", "id");
CREATE INDEX "idx_runs_ask_group"
    ON "runs" ("ask_group");
COMMIT;
