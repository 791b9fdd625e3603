"""The DuckDB store: the project's only SQL.

- ``schema``: the tables;
- ``connection``: where the file is and the one way to open it (:func:`connect` for a process of its own,
  :func:`session` / :func:`transaction` where threads share a process, as in the dashboard);
- ``writes``: idempotent writes (``INSERT … ON CONFLICT``);
- read-models: ``reads`` (runs, test cases, results, answers, jobs), ``detections`` (the violations
  search), ``labelling`` (precision labels), ``inspector`` (one detection in depth), ``compare`` (two
  runs on the same test cases);
- ``records``: the stored run configuration, typed;
- ``cache``: the store as the engines' answer and score cache (``mortar.caches``).

Callers write ``from mortar import store`` and use the names below.
"""

from mortar.store.cache import StoreCache
from mortar.store.compare import (case_signatures, paired_answers, question_answers, questions_with_detections,
                                  run_dataset, run_seeds,
                                  seed_questions)
from mortar.store.connection import (DEFAULT_DB, LOCK_WAIT_S, MEMORY, PROJECT_ROOT, RETRY_S, StoreBusy, connect, db_path,
                                     open_file, open_read_only, process_lock, session, transaction)
from mortar.store.detections import (GROUP_SORTABLE, NO_LEVEL, SORTABLE, UNKNOWN_SUT, DetectionFilter,
                                     count_detections, detection_relations, filter_choices, find_detections, find_groups,
                                     group_detections, group_key, parse_group_key, run_detection_ids, run_detections,
                                     sut_of_runs)
from mortar.store.inspector import (case_rounds, detection, original_case_id, question_versions, round_sensitivity,
                                    is_persona_seed, seed_graph, seed_question, story,
                                    test_case, versions)
from mortar.store.labelling import (annotators, detection_context, final_labels, label_of, labelled_detections,
                                    read_adjudications, read_labels)
from mortar.store.reads import (UnknownRun, detections_export, stored_datasets, stored_seeds, unknown_rounds, list_jobs, read_cases_and_verdicts, read_checks,
                                read_confirmations, read_graphs, read_job, read_orig_samples, read_run_metrics, read_selections, read_mutants, read_priorities, read_sensitivities, read_runs, resolve_run_id, rounds_export, run_stamps,
                                run_config, mean_answer_seconds, stored_answers, stored_config, stored_configs, test_case_rounds,
                                transformed_rounds)
from mortar.store.records import StoredConfig
from mortar.store.schema import SCHEMA, SCHEMA_SHA
from mortar.store.studies import (STUDY_PREFIX, is_study_id, read_studies, resolve_study_id, study_config,
                                  study_systems, write_study, write_study_system)
from mortar.store.writes import (upsert, write_adjudication, write_answers, write_checks, write_dataset, write_graphs,
                                 write_confirmations, write_job, write_label, write_orig_samples, write_outputs, write_run, write_run_metrics, write_selections, write_mutants, write_priorities, write_sensitivities, write_run_status,
                                 write_sut, write_test_cases)

__all__ = [
    "StoreCache",
    "SCHEMA", "SCHEMA_SHA", "DEFAULT_DB", "LOCK_WAIT_S", "MEMORY", "PROJECT_ROOT", "RETRY_S", "StoreBusy", "connect", "db_path", "open_file",
    "open_read_only", "process_lock", "session", "transaction",
    "upsert", "write_adjudication", "write_answers", "write_checks", "write_dataset", "write_graphs", "write_job",
    "write_confirmations", "write_label", "write_orig_samples", "write_outputs", "write_run", "write_run_metrics", "write_selections", "write_mutants", "write_priorities", "write_sensitivities", "write_run_status", "write_sut",
    "write_test_cases",
    "StoredConfig", "UnknownRun", "resolve_run_id", "run_config", "run_stamps", "stored_config", "stored_configs", "read_runs",
    "read_run_metrics", "read_confirmations", "read_orig_samples", "read_selections", "read_mutants", "read_priorities", "read_sensitivities", "read_graphs", "read_checks", "read_cases_and_verdicts", "unknown_rounds", "stored_datasets", "stored_seeds", "test_case_rounds", "rounds_export",
    "detections_export", "transformed_rounds", "mean_answer_seconds", "stored_answers", "list_jobs", "read_job",
    "NO_LEVEL", "SORTABLE", "UNKNOWN_SUT", "DetectionFilter", "count_detections", "find_detections", "filter_choices", "sut_of_runs",
    "run_detection_ids", "run_detections", "detection_relations", "GROUP_SORTABLE", "find_groups", "group_detections", "group_key",
    "parse_group_key",
    "STUDY_PREFIX", "is_study_id", "read_studies", "resolve_study_id", "study_config", "study_systems", "write_study",
    "write_study_system",
    "read_labels", "read_adjudications", "label_of", "annotators", "final_labels", "detection_context",
    "labelled_detections",
    "case_signatures", "paired_answers", "question_answers", "questions_with_detections", "run_dataset", "run_seeds", "seed_questions",
    "detection", "case_rounds", "test_case", "round_sensitivity", "original_case_id", "story", "is_persona_seed", "seed_question", "seed_graph", "versions",
    "question_versions",
]
