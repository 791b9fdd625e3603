"""The store's tables: one DuckDB file, created on first use (``CREATE … IF NOT EXISTS``)."""

import hashlib

SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id TEXT PRIMARY KEY,      -- sha256 of the file's bytes
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    n_seeds INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS seeds (
    dataset_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    source TEXT,
    story TEXT NOT NULL,
    n_rounds INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, seed_id)
);
CREATE TABLE IF NOT EXISTS seed_rounds (
    dataset_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    turn_id INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT,
    PRIMARY KEY (dataset_id, seed_id, turn_id)
);
ALTER TABLE seeds ADD COLUMN IF NOT EXISTS persona JSON;  -- a persona dialogue: {sentences, revised, partner}
ALTER TABLE seed_rounds ADD COLUMN IF NOT EXISTS candidates JSON;  -- the dataset's candidate replies (PersonaChat)
ALTER TABLE seed_rounds ADD COLUMN IF NOT EXISTS intent TEXT;  -- an intent/slot dataset's gold intent
ALTER TABLE seed_rounds ADD COLUMN IF NOT EXISTS tags JSON;  -- … and its BIO slot tags, one per word of the question
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,               -- 'generate' or 'run'
    dataset_id TEXT NOT NULL,
    run_seed INTEGER NOT NULL,
    config JSON NOT NULL,
    status TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS test_cases (
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    perturbation TEXT NOT NULL,
    replicate INTEGER NOT NULL,
    n_rounds INTEGER NOT NULL,
    target_round INTEGER,             -- single-turn methods (METAL): the seed round whose question is changed
    PRIMARY KEY (run_id, test_case_id)
);
ALTER TABLE test_cases ADD COLUMN IF NOT EXISTS target_round INTEGER;  -- stores written before it existed
ALTER TABLE test_cases ADD COLUMN IF NOT EXISTS story TEXT;  -- the grounding asked with, when not the seed's story
ALTER TABLE test_cases ADD COLUMN IF NOT EXISTS guide TEXT;  -- guided mutants: the guide that kept them (gini, random)
CREATE TABLE IF NOT EXISTS test_case_rounds (
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    position INTEGER NOT NULL,        -- 1-based position in the perturbed dialogue
    source_round INTEGER NOT NULL,    -- turn_id of the seed round asked here
    question TEXT NOT NULL,
    ec_equivalent BOOLEAN,            -- the equivalent context verdict and the checks that passed
    ec_semantic BOOLEAN,
    ec_ontology BOOLEAN,
    ec_story BOOLEAN,
    ec_needed JSON,                   -- Ḡ_j: entities the question takes from its original context
    ec_missing JSON,                  -- needed entities the perturbed context lacks
    ec_follows_ok BOOLEAN,            -- elliptical questions: right after the round they continue?
    PRIMARY KEY (run_id, test_case_id, position)
);
CREATE TABLE IF NOT EXISTS kg_extractions (
    dataset_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    backend TEXT NOT NULL,            -- 'spacy' or 'llm'
    model TEXT NOT NULL,              -- spaCy pipeline + coreference mode, or the LLM's name
    status TEXT NOT NULL,             -- 'ok' or 'failed'
    graph JSON,                       -- DialogueGraph.to_json() when ok
    error TEXT,                       -- the reason when failed
    PRIMARY KEY (dataset_id, seed_id, backend, model)
);
CREATE TABLE IF NOT EXISTS run_rounds (
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    output TEXT,                      -- the SUT's answer; NULL when the round errored
    error TEXT,
    reference TEXT,                   -- what RBT/MR1/MR2 compared the output with
    similarity DOUBLE,
    PRIMARY KEY (run_id, test_case_id, position)
);
CREATE TABLE IF NOT EXISTS checks (   -- every comparison a relation made; violated ones are detections
    run_id TEXT NOT NULL,
    check_id TEXT NOT NULL,
    relation TEXT NOT NULL,           -- RBT, MR1, MR2, MR3, MR4
    seed_id TEXT NOT NULL,
    source_round INTEGER NOT NULL,
    perturbations JSON NOT NULL,
    test_case_ids JSON NOT NULL,
    positions JSON NOT NULL,
    text_a TEXT NOT NULL,
    text_b TEXT NOT NULL,
    similarity DOUBLE NOT NULL,
    ec_equivalent BOOLEAN,
    violated BOOLEAN NOT NULL,
    bug_level TEXT,                   -- L1, L2, L3 for MR detections
    PRIMARY KEY (run_id, check_id)
);
ALTER TABLE checks ADD COLUMN IF NOT EXISTS unstable BOOLEAN;  -- on a question whose repeated ORIG answers disagree
ALTER TABLE checks ADD COLUMN IF NOT EXISTS flaky BOOLEAN;  -- a detection not reproduced when asked again (--confirm)
ALTER TABLE checks ADD COLUMN IF NOT EXISTS no_answer BOOLEAN;  -- two answers of which neither answers: never violated
CREATE OR REPLACE VIEW detections AS
    SELECT run_id, check_id AS detection_id, relation, perturbations, seed_id, source_round, test_case_ids,
           positions, text_a, text_b, similarity, ec_equivalent, bug_level, coalesce(unstable, false) AS unstable,
           coalesce(flaky, false) AS flaky
    FROM checks WHERE violated;
CREATE TABLE IF NOT EXISTS orig_samples (  -- `--orig-repeats`: ORIG's answers when asked again (the noise floor)
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    sample INTEGER NOT NULL,          -- 1 … repeats − 1 (sample 0 is the run's own answer, in run_rounds)
    output TEXT,                      -- NULL when the round errored
    PRIMARY KEY (run_id, test_case_id, position, sample)
);
CREATE TABLE IF NOT EXISTS confirmations (  -- `--confirm K`: a detection's conversations asked again, afresh
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    confirmation INTEGER NOT NULL,    -- 1 … K
    conversation_hash TEXT NOT NULL,  -- the conversation asked (the same as the run's answer there)
    output TEXT,                      -- NULL when the SUT gave no answer
    error TEXT,
    seconds DOUBLE,
    PRIMARY KEY (run_id, test_case_id, position, confirmation)
);
CREATE TABLE IF NOT EXISTS selections (  -- response selection: the gold answer's rank among distractors, per round
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    source_round INTEGER NOT NULL,
    perturbation TEXT NOT NULL,
    gold_rank INTEGER NOT NULL,       -- 1 = the SUT's likelihood ranks the gold answer first
    top TEXT NOT NULL,                -- the candidate ranked first
    candidates INTEGER NOT NULL,
    oracle_pass BOOLEAN,              -- does the answer oracle accept the SUT's generated answer there
    PRIMARY KEY (run_id, test_case_id, position)
);
CREATE TABLE IF NOT EXISTS mutants (  -- guided generation (DialTest's Gini search and its random baseline)
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,       -- the test case it is (kept) or would have been
    seed_id TEXT NOT NULL,
    source_round INTEGER NOT NULL,
    guide TEXT NOT NULL,              -- 'gini' or 'random'
    step INTEGER NOT NULL,            -- 1 … budget: each evaluated mutant is one SUT call
    operators TEXT NOT NULL,          -- the transformations from the seed question, e.g. 'SR+WI'
    question TEXT NOT NULL,
    answer TEXT,
    gini DOUBLE,                      -- DeepGini impurity of the SUT's answer
    parent_gini DOUBLE,               -- … of the test it was made from
    kept BOOLEAN NOT NULL,
    PRIMARY KEY (run_id, test_case_id)
);
CREATE TABLE IF NOT EXISTS sensitivities (  -- white-box scores of a local SUT on a seed conversation's round
    sut_fingerprint TEXT NOT NULL,
    dataset_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    turn_id INTEGER NOT NULL,
    method TEXT NOT NULL,             -- 'gri' or 'wali'
    target TEXT NOT NULL,             -- whose answer they explain: 'gold' or 'sut'
    segments JSON NOT NULL,           -- share of the scores per segment: story, round k, question
    question_tokens JSON NOT NULL,    -- [start, end, score] per token of the question
    seconds DOUBLE,                   -- time to compute (one forward and backward pass)
    PRIMARY KEY (sut_fingerprint, dataset_id, seed_id, turn_id, method, target)
);
CREATE TABLE IF NOT EXISTS priorities (  -- `mortar prioritise`: a run's test cases in the order of a score
    run_id TEXT NOT NULL,
    order_by TEXT NOT NULL,           -- 'gri', 'wali', 'gini' or 'random'
    rank INTEGER NOT NULL,            -- 1 = run first
    test_case_id TEXT NOT NULL,
    score DOUBLE,
    PRIMARY KEY (run_id, order_by, rank)
);
CREATE TABLE IF NOT EXISTS labels (   -- precision labelling: one score per (detection, annotator)
    run_id TEXT NOT NULL,
    detection_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    score INTEGER NOT NULL,           -- 0–10, high = the SUT output is acceptable; < 6 = true positive
    note TEXT,
    labelled_at TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, detection_id, annotator)
);
CREATE TABLE IF NOT EXISTS adjudications (  -- the final label where two annotators disagree
    run_id TEXT NOT NULL,
    detection_id TEXT NOT NULL,
    true_positive BOOLEAN NOT NULL,
    adjudicator TEXT NOT NULL,
    note TEXT,
    decided_at TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, detection_id)
);
CREATE TABLE IF NOT EXISTS jobs (     -- runs launched in the background (from the dashboard)
    job_id TEXT PRIMARY KEY,
    args JSON NOT NULL,               -- the `mortar run` arguments; never a key
    pid INTEGER,
    status TEXT NOT NULL,             -- queued, running, done, failed, cancelled
    stage TEXT,
    done INTEGER,
    total INTEGER,
    rate DOUBLE,                      -- answers per second
    run_id TEXT,
    message TEXT,
    started_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS suts (
    sut_fingerprint TEXT PRIMARY KEY, -- hash of backend, model, system prompt, decoding settings
    config JSON NOT NULL              -- the same, readable; never holds an API key
);
CREATE TABLE IF NOT EXISTS answers (
    sut_fingerprint TEXT NOT NULL,
    conversation_hash TEXT NOT NULL,  -- hash of story + earlier questions/answers + the new question
    answer TEXT,                      -- NULL when errored
    error TEXT,                       -- why the SUT gave no answer (an errored round is never a bug)
    seconds DOUBLE,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (sut_fingerprint, conversation_hash)
);
ALTER TABLE answers ADD COLUMN IF NOT EXISTS gini DOUBLE;  -- DeepGini impurity of the answer (local SUTs)
CREATE TABLE IF NOT EXISTS studies (  -- one test suite run against several systems (``mortar study``)
    study_id TEXT PRIMARY KEY,        -- from the suite: dataset, seed, methods and their settings, oracle
    name TEXT,
    dataset_id TEXT NOT NULL,
    config JSON NOT NULL,             -- the suite's run configuration (its SUT fields unused)
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS study_systems (  -- the systems of a study, each tested by one run
    study_id TEXT NOT NULL,
    system TEXT NOT NULL,             -- the name the study's tables give it
    position INTEGER NOT NULL,        -- the order it was listed in
    spec JSON NOT NULL,               -- SUT, system prompt, max new tokens, endpoint, the NAME of its key variable
    run_id TEXT NOT NULL,
    PRIMARY KEY (study_id, system)
);
CREATE TABLE IF NOT EXISTS run_metrics (  -- the headline metrics a run stores when it finishes
    run_id TEXT NOT NULL,
    method TEXT NOT NULL,             -- RBT, MT, METAL, …
    metric TEXT NOT NULL,             -- NBugs, Rate+, BPTC, RETC, L1, …
    value DOUBLE,
    PRIMARY KEY (run_id, method, metric)
);
"""

# A store records the hash of the schema it was last brought up to: connecting skips the schema script when it
# matches (the script costs 0.1–0.2 s, too much for the writes of a run with many lanes), and any change to the
# script above brings older stores up to date on their next open.
SCHEMA_SHA = hashlib.sha256(SCHEMA.encode()).hexdigest()[:16]
SCHEMA += f"""
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR REPLACE INTO store_meta VALUES ('schema', '{SCHEMA_SHA}');
"""
