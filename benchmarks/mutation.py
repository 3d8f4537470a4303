"""Mutation testing of the core modules: when a line is wrong, does a test fail?

A small AST driver (no third-party mutation tool). For each module it lists every mutation site
(operator swaps, flipped comparisons, and/or, changed numbers, booleans and strings, ``return None``,
deleted statements), samples up to ``--max`` of them with a fixed seed, and runs each mutant against
the test files chosen for that module (``MODULES`` below) with ``-p no:xdist -x -q`` and a timeout.

Nothing in the working tree is mutated: the tracked files are copied to a scratch tree
(``--work``, default a temporary directory), mutants are written there, and the tests run with that
tree first on ``sys.path`` and ``PYTHONPATH`` (so subprocesses started by a test import the mutant
too). To keep the per-mutant cost low, one parent process imports pytest and the heavy third-party
libraries once and forks a child per mutant; the child imports ``harness_memory`` afresh from the
scratch tree (bytecode caching is off, so a same-size mutant never reuses a stale ``.pyc``).

Equivalent mutants (no test can tell them apart from the original) are listed with the reason in
``benchmarks/mutation/equivalent.json``, matched by a fingerprint that depends on neither line numbers
nor formatting (the scope, the mutated statement as ``ast.unparse`` prints it, the operator), and
excluded from the score.

    nice -n 10 .venv/bin/python benchmarks/mutation.py                      # the nine core modules
    nice -n 10 .venv/bin/python benchmarks/mutation.py ranking decay --max 40
    nice -n 10 .venv/bin/python benchmarks/mutation.py --survivors ranking  # re-run last run's survivors
    .venv/bin/python benchmarks/mutation.py --list ranking                  # the sites, without running
    .venv/bin/python benchmarks/mutation.py --report                        # rewrite REPORT.md from results
    nice -n 10 .venv/bin/python benchmarks/mutation.py error_signatures --since-commit ed93d6f --max 40
    nice -n 10 .venv/bin/python benchmarks/mutation.py failure_lexicon --lines 336-462 --max 40

Restricting the sample to new code: ``--since-commit REV`` keeps the sites on lines that ``git diff -U0 REV``
marks as added or changed in the module's file (the working tree against REV), ``--lines FROM-TO`` (repeatable)
the sites on those lines; a site counts when any line of its node is in range (a regex string of several lines
with one new line counts). Both filter the sites before sampling (the seed then samples among them), and the
result records the filter and how many sites it kept (``total_sites``) of all (``all_sites``). ``--survivors``
re-runs the saved survivors whatever the filter.

Results: ``benchmarks/mutation/<module>.json`` per module and ``benchmarks/mutation/REPORT.md``.
Not in CI (a module takes minutes to tens of minutes); run it before resolving an issue that touches
the core. See docs/development.md.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "mutation"
EQUIVALENT = OUT / "equivalent.json"

# module short name -> (source file, the test files that exercise it, a -k expression narrowing them
# or ""). The test files are chosen by what calls the module; pytest runs them in this order and -x stops
# at the first failure. A -k expression keeps a slow shared file to the tests of this module (it also
# matches the file name, so a module's own test file runs whole); an entry may also name one test of a
# slow file (``file::test``).
MODULES: dict[str, tuple[str, list[str], str]] = {
    "redact": (
        "harness_memory/redact.py",
        [
            "tests/test_redact.py",
            "tests/test_redact_patterns.py",
            "tests/test_redact_gate.py",
            "tests/test_redact_short_cache.py",
        ],
        "",
    ),
    "consolidate": (
        "jobs/consolidate.py",
        ["tests/test_maintenance.py", "tests/test_consolidate_behaviour.py"],
        "consolidat",
    ),
    "decay": (
        "jobs/decay.py",
        ["tests/test_decay_rule.py", "tests/test_maintenance.py", "tests/test_decay_behaviour.py"],
        "decay or archive",
    ),
    "writes": (
        "harness_memory/writes.py",
        [
            "tests/test_remember.py",
            "tests/test_hardening_inputs.py",
            "tests/test_writes_behaviour.py",
            "tests/test_write_index.py",
            "tests/test_remember_batch.py",
        ],
        "",
    ),
    "ranking": (
        "harness_memory/ranking.py",
        ["tests/test_ranking_many.py", "tests/test_recall.py", "tests/test_ranking_direction.py"],
        "",
    ),
    "ledger": ("harness_memory/ledger.py", ["tests/test_ledger.py", "tests/test_ledger_levels.py"], ""),
    "error_signatures": (
        "harness_memory/error_signatures.py",
        [
            "tests/test_review_signing_methods_45_48.py",  # the review's mends (2026-11-28)
            "tests/test_category_classes_heldout28.py",  # method 48 (2026-11-28)
            "tests/test_category_classes_heldout26.py",  # method 47 (2026-11-28)
            "tests/test_category_classes_heldout24.py",  # method 46 (2026-11-28)
            "tests/test_category_classes_heldout23.py",  # method 45 (2026-11-28)
            "tests/test_category_classes_heldout22.py",  # method 44 (2026-11-28)
            "tests/test_category_classes_heldout21.py",  # method 43 (2026-11-28)
            "tests/test_one_kind_one_category_method35.py",  # method 35 (2026-11-27)
            "tests/test_one_kind_one_category_method34.py",  # method 34 (2026-11-27)
            "tests/test_word_roles_method33.py",  # method 33 (2026-11-27)
            "tests/test_frame_names_method37.py",  # method 37 (2026-11-27)
            "tests/test_value_runs_method41.py",  # method 41 (2026-11-28)
            "tests/test_logger_context_method40.py",  # method 40 (2026-11-28)
            "tests/test_value_shapes_method39.py",  # method 39 (2026-11-28)
            "tests/test_structured_values_method38.py",  # method 38 (2026-11-28)
            "tests/test_runtime_reports.py",  # methods 30-31 (2026-11-27)
            "tests/test_published_hierarchies.py",  # method 29
            # methods 27/28's edges and the clause model (written for the mutants of their new code, 2026-11-27)
            "tests/test_methods_27_28_strength.py",
            "tests/test_clause_model_strength.py",
            "tests/test_mask_params_strength.py",
            "tests/test_error_signatures.py",
            "tests/test_whole_logs.py",
            "tests/test_error_signatures_behaviour.py",
            "tests/test_category_classes.py",
            "tests/test_java_trace_signatures.py",
            "tests/test_unseen_failure_rules.py",
            "tests/test_category_causes.py",
            "tests/test_ci_corpus.py",
            "tests/test_fix_links.py",
            "tests/test_gradle_failure_report.py",
            "tests/test_signature_joins.py",
            "tests/test_category_classes_heldout7.py",
            "tests/test_category_classes_heldout8.py",
            "tests/test_category_classes_heldout9.py",
            "tests/test_category_classes_heldout10.py",
            "tests/test_category_classes_heldout11.py",
            "tests/test_category_classes_heldout12.py",
            "tests/test_grouping_evidence.py",
            "tests/test_grouping_strength.py",
            "tests/test_category_model.py",
            # signing methods 27 and 28 and mask_params' nested params (2026-11-27)
            "tests/test_category_clauses.py",
            "tests/test_review_methods_27_28.py",
            "tests/test_mask_params_nested.py",
            "tests/test_excerpt_classes_heldout14.py",
            "tests/test_lexicon_strength.py",
            "tests/test_failure_lexicon.py",
            "tests/test_error_text_strength.py",
        ],
        "",
    ),
    # the failure lexicon beneath the category rules (method 24) and the clause model (method 27): its own tests,
    # then the category tests that read it through error_signatures
    "failure_lexicon": (
        "harness_memory/failure_lexicon.py",
        [
            "tests/test_category_classes_heldout23.py",  # method 45 (2026-11-28)
            "tests/test_one_kind_one_category_method35.py",  # method 35 (2026-11-27)
            "tests/test_one_kind_one_category_method34.py",  # method 34 (2026-11-27)
            "tests/test_word_roles_method33.py",  # method 33 (2026-11-27)
            "tests/test_runtime_reports.py",  # methods 30-31 (2026-11-27)
            "tests/test_published_hierarchies.py",  # method 29
            "tests/test_clause_model_strength.py",
            "tests/test_category_clauses.py",
            "tests/test_failure_lexicon.py",
            "tests/test_lexicon_strength.py",
            "tests/test_review_methods_27_28.py",
            "tests/test_excerpt_classes_heldout14.py",
            "tests/test_error_signatures_behaviour.py",
            "tests/test_category_classes.py",
            "tests/test_category_causes.py",
            "tests/test_unseen_failure_rules.py",
            "tests/test_ci_corpus.py",
        ],
        "",
    ),
    "category_model": (
        "harness_memory/category_model.py",
        ["tests/test_category_model.py", "tests/test_category_classes_heldout9.py", "tests/test_ci_corpus.py"],
        "",
    ),
    "recall": (
        "harness_memory/recall.py",
        ["tests/test_recall.py", "tests/test_recall_channels.py", "tests/test_keyword_prefilter.py"],
        "",
    ),
    "access_writer": (
        "harness_memory/access_writer.py",
        ["tests/test_access_writer.py", "tests/test_recall_scale.py", "tests/test_recall_channels.py"],
        "",
    ),
    "validation": (
        "harness_memory/validation.py",
        [
            "tests/test_hardening_inputs.py",
            "tests/test_refused_calls.py",
            "tests/test_times.py",
            "tests/test_validation_behaviour.py",
        ],
        "",
    ),
    # the modules measured second (sampled, --max 30 or 40), each against the test files of its behaviour
    "confidence": (
        "harness_memory/confidence.py",
        ["tests/test_confidence.py", "tests/test_confidence_behaviour.py"],
        "",
    ),
    "tasks": (
        "harness_memory/tasks.py",
        ["tests/test_task_signature_behaviour.py", "tests/test_ledger.py"],
        "signature",
    ),
    "memory_types": (
        "harness_memory/memory_types.py",
        ["tests/test_memory_types_behaviour.py", "tests/test_remember.py"],
        "type",
    ),
    "lifecycle": (
        "harness_memory/lifecycle.py",
        ["tests/test_lifecycle_behaviour.py", "tests/test_lifecycle.py"],
        "",
    ),
    "tool_calls": (
        "harness_memory/tool_calls.py",
        ["tests/test_tool_calls_behaviour.py", "tests/test_tool_calls.py"],
        "",
    ),
    "episodes": ("harness_memory/episodes.py", ["tests/test_episodes_behaviour.py", "tests/test_episodes.py"], ""),
    "summarisers": (
        "harness_memory/summarisers.py",
        ["tests/test_summarisers_behaviour.py", "tests/test_episodes.py"],
        "",
    ),
    "portability": (
        "harness_memory/portability.py",
        ["tests/test_portability_behaviour.py", "tests/test_portability.py"],
        "",
    ),
    "portable_state": (
        "harness_memory/portable_state.py",
        ["tests/test_portable_state_behaviour.py", "tests/test_portable_state.py"],
        "",
    ),
    "models": (
        "harness_memory/models.py",
        ["tests/test_models_behaviour.py", "tests/test_remember.py", "tests/test_recall.py"],
        "",
    ),
    "documents": (
        "harness_memory/documents.py",
        ["tests/test_documents_behaviour.py", "tests/test_documents.py"],
        "",
    ),
    "watch": ("harness_memory/watch.py", ["tests/test_watch.py"], ""),
    "regex_prefilter": (
        "harness_memory/regex_prefilter.py",
        ["tests/test_signing_speed_prefilter.py", "tests/test_regex_prefilter_fallback.py"],
        "",
    ),
    "fixes": (
        "harness_memory/fixes.py",
        [
            "tests/test_fix_evidence.py",
            "tests/test_fix_kinds.py",
            "tests/test_fix_links.py",
            "tests/test_fix_task_links.py",
            "tests/test_fix_origin_links.py",
            "tests/test_fix_distinct.py",
            "tests/test_fix_rank_edges.py",
            "tests/test_fix_refuted_in_task.py",
            "tests/test_fix_local_evidence.py",  # a credit is evidence where it was given (2026-11-27)
            "tests/test_fix_nearest_instance.py",  # the nearest instance (2026-11-27)
            "tests/test_fix_instance_credits.py",  # refuted for another instance (2026-11-28)
            "tests/test_fix_similar_breadth.py",  # fixes that carry over (2026-11-28)
            "tests/test_fix_similar_blocks.py",  # similar by failure block (2026-11-28)
            "tests/test_lifecycle.py",
        ],
        "",
    ),
    "embedders": (
        "harness_memory/embedders.py",
        ["tests/test_embedders_behaviour.py", "tests/test_embedders.py", "tests/test_hashing_embedder.py"],
        "",
    ),
    "settings": (
        "harness_memory/settings.py",
        ["tests/test_review_edges_2026_11_28.py", "tests/test_settings_behaviour.py", "tests/test_hardening_inputs.py"],
        "settings",
    ),
    "migrate": ("harness_memory/migrate.py", ["tests/test_migrate_behaviour.py", "tests/test_storage.py"], ""),
    "runner": (
        "jobs/runner.py",
        ["tests/test_jobs_behaviour.py", "tests/test_hardening_leases.py", "tests/test_maintenance.py"],
        "not decay and not consolidat and not schedul and not metrics",
    ),
    "batches": ("jobs/batches.py", ["tests/test_jobs_behaviour.py", "tests/test_batches.py"], ""),
    "resign": (
        "jobs/resign.py",
        ["tests/test_jobs_behaviour.py", "tests/test_whole_logs.py", "tests/test_fix_kinds.py"],
        "resign",
    ),
    "scheduler": ("jobs/scheduler.py", ["tests/test_jobs_behaviour.py", "tests/test_maintenance.py"], "schedul"),
    "expire": (
        "jobs/expire.py",
        ["tests/test_jobs_behaviour.py", "tests/test_maintenance.py", "tests/test_batches.py"],
        "expire or jobs_behaviour",
    ),
    "compact": (
        "jobs/compact.py",
        ["tests/test_jobs_behaviour.py", "tests/test_maintenance.py", "tests/test_batches.py"],
        "compact",
    ),
    "reflect": ("jobs/reflect.py", ["tests/test_jobs_behaviour.py", "tests/test_episodes.py"], "reflect"),
    "failure_excerpt": (
        "harness_memory/failure_excerpt.py",
        [
            "tests/test_review_signing_methods_45_48.py",  # the review's mends (2026-11-28)
            "tests/test_category_classes_heldout28.py",  # method 48 (2026-11-28)
            "tests/test_category_classes_heldout26.py",  # method 47 (2026-11-28)
            "tests/test_category_classes_heldout24.py",  # method 46 (2026-11-28)
            "tests/test_category_classes_heldout23.py",  # method 45 (2026-11-28)
            "tests/test_category_classes_heldout21.py",  # method 43 (2026-11-28)
            "tests/test_runtime_reports.py",  # methods 30-31 (2026-11-27)
            "tests/test_published_hierarchies.py",  # method 29
            "tests/test_methods_27_28_strength.py",  # method 28's edges (2026-11-27)
            "tests/test_failure_excerpt_behaviour.py",
            "tests/test_category_causes.py",
            "tests/test_error_signatures_behaviour.py",
            "tests/test_error_signatures.py",
            "tests/test_whole_logs.py",
            "tests/test_ci_corpus.py",
            "tests/test_java_trace_signatures.py",
            "tests/test_category_classes.py",
            "tests/test_unseen_failure_rules.py",
            "tests/test_signature_joins.py",
            "tests/test_category_classes_heldout7.py",
            "tests/test_category_classes_heldout8.py",
            "tests/test_category_classes_heldout9.py",
            "tests/test_category_classes_heldout10.py",
            "tests/test_category_classes_heldout11.py",
            "tests/test_category_classes_heldout12.py",
            "tests/test_excerpt_classes_heldout11.py",
            "tests/test_excerpt_classes_heldout13.py",
            # signing method 28's excerpt classes (2026-11-27)
            "tests/test_excerpt_classes_heldout14.py",
            "tests/test_category_clauses.py",
            "tests/test_review_methods_27_28.py",
        ],
        "",
    ),
    # the modules measured last (--max 30), each against the test files that call it
    "vector_index": (
        "harness_memory/vector_index.py",
        [
            "tests/test_vector_index_behaviour.py",
            "tests/test_vector_index_paths.py",
            "tests/test_vector_index_int8.py",
            "tests/test_vector_rowmap.py",
            "tests/test_keyword_prefilter.py",
            "tests/test_write_index.py",
            "tests/test_bulk_delete.py",
        ],
        "",
    ),
    # sqlite_backend and store: their full test sets took 430 s and 640 s unmutated under a load of 16 (other
    # engineers' suites), so these runs use the files that call them most directly
    "sqlite_backend": (
        "harness_memory/sqlite_backend.py",
        [
            "tests/test_sqlite_backend_behaviour.py",
            "tests/test_backend_vectors_behaviour.py",
            "tests/test_keyword_prefilter.py",
            # the FTS merge's steps stay bounded while another writer keeps adding segments
            "tests/test_batches.py::test_compacting_the_keyword_index_ends_while_another_writer_keeps_adding",
            "tests/test_storage.py",
            "tests/test_migrate_behaviour.py",
            "tests/test_write_index.py",
            "tests/test_bulk_delete.py",
            "tests/test_fix_similar_blocks.py",  # the fix links' similar-error searches, bounded (2026-11-28)
        ],
        "",
    ),
    "reembed": (
        "harness_memory/reembed.py",
        ["tests/test_reembed_batches.py", "tests/test_reembed_elsewhere.py", "tests/test_embedders.py"],
        "",
    ),
    "sqlite_fresh": (
        "harness_memory/sqlite_fresh.py",
        ["tests/test_sqlite_fresh.py", "tests/test_migrate_behaviour.py"],
        "",
    ),
    "store": (
        "harness_memory/store.py",
        ["tests/test_store_behaviour.py", "tests/test_public_calls.py", "tests/test_api.py", "tests/test_archive.py"],
        "",
    ),
    "core": (
        "harness_memory/core.py",
        [
            "tests/test_core_error_text_behaviour.py",
            "tests/test_remember.py",
            "tests/test_embedders.py",
            "tests/test_reembed_elsewhere.py",  # another process's reembed() is noticed before the next vector
            # (before test_recall.py, whose hypothesis tests can exceed their 200 ms deadline under load)
            "tests/test_recall.py",
            "tests/test_storage.py",
            # which errors key on the frame where they happened is decided here, when a message is signed
            "tests/test_error_signatures.py::test_environment_errors_are_one_error_wherever_the_code_met_them",
            "tests/test_category_classes.py::test_a_recursion_is_keyed_by_where_it_recursed_and_memory_exhaustion_is_not",
            # the JSON it writes (dumps) is what an export file holds
            "tests/test_portability_behaviour.py::test_an_export_is_utf8_text_with_every_character_as_written",
            # where a failing run started (_origin) is read here, when a text is signed
            "tests/test_fix_origin_links.py::test_the_origin_is_the_outermost_application_frame",
            # re-signing from a memory's basis decides the key frame as signing did
            "tests/test_jobs_behaviour.py::test_resign_with_an_unchanged_method_leaves_every_kind_of_signature_where_it_is",
            # the access log's rows of one recall: its wall time on the top hit only
            "tests/test_metrics_views.py::test_a_recall_with_several_hits_is_one_latency_row_on_its_top_hit",
        ],
        "",
    ),
    # (test_backends' multi-process and PostgreSQL-server tests are left to the suite: a mutant of the target
    # parsing fails in the first seconds or not at all)
    "backend": (
        "harness_memory/backend.py",
        [
            "tests/test_backend_targets_behaviour.py",
            "tests/test_review_edges_2026_11_28.py",
            "tests/test_backends.py",
            "tests/test_rarest_terms.py",
        ],
        "behaviour or targets or url or sqlite or rarest or budget or uncounted or file_uri or secret or password",
    ),
    # (its pytest-in-pytest test timed its command out at 120 s under a load of 17: left to the suite)
    "adapter_run": (
        "harness_memory/adapters/run.py",
        ["tests/test_adapter_run_behaviour.py", "tests/test_adapter_run.py"],
        "not failing_pytest_run",
    ),
    # (its tool-call log test needs six hook processes each answering within the 2 s budget: under load the
    # first one, which creates the database, runs out of it and answers empty, so it fails unmutated)
    "claude_code": (
        "harness_memory/adapters/claude_code.py",
        ["tests/test_claude_code_behaviour.py", "tests/test_adapter_claude_code.py"],
        "not test_every_tool_call_goes_into_the_tool_call_log",
    ),
    "langgraph": (
        "harness_memory/integrations/langgraph.py",
        ["tests/test_langgraph_behaviour.py", "tests/test_adapter_langgraph.py"],
        "",
    ),
    "testing": (
        "harness_memory/testing.py",
        [
            "tests/test_testing_doubles_behaviour.py",
            "tests/test_hashing_embedder.py",
            "tests/test_embedders.py",
            "tests/test_times.py",
        ],
        "",
    ),
    # its tests are the PostgreSQL half (PG_MODULES): one server for the whole run, started by the driver
    "postgres_backend": (
        "harness_memory/postgres_backend.py",
        [
            "tests/test_backend_vectors_behaviour.py",
            "tests/test_storage.py",
            "tests/test_backends.py",
            "tests/test_remember_batch.py",
            "tests/test_bulk_delete.py",
            "tests/test_write_index.py",
            "tests/test_recall.py",  # its contract tests on PostgreSQL (the keyword posting budget)
            "tests/test_pg_vector_backlog.py",  # the vector backlog and the graph's rebuild (issue 10)
            "tests/test_pg_vector_codes.py",  # a batch's near duplicates through the sign codes (issue 10)
            "tests/test_pg_vector_ivfflat.py",  # compact's IVFFlat index: built, retrained, swapped (issue 10)
        ],
        # the PostgreSQL half by its parameter, and test_backends' tests on the session's server (pg_url)
        "postgres or filtered_vector_search or environment_and_settings or restart_between or url_options "
        "or privilege or vocabulary or storage_errors or role or unreachable or export_from_sqlite or pg_vector_backlog "
        "or pg_vector_codes or pg_vector_ivfflat",
    ),
    # (test_dashboard's tests of tokens, the server and the command read no query's numbers)
    "dashboard_queries": (
        "harness_memory/dashboard/queries.py",
        ["tests/test_dashboard_queries_behaviour.py", "tests/test_dashboard.py"],
        "not token and not serve and not dashboard_command and not access_log and not actions",
    ),
    "dashboard_stats": (
        "harness_memory/dashboard/stats.py",
        ["tests/test_dashboard_stats_behaviour.py", "tests/test_dashboard.py"],
        "",
    ),
    # the dashboard's rendering: the pages over real HTTP (test_dashboard.py without the token, server and
    # command tests, which exercise the app, not the rendering) and the rendering behaviour file
    "dashboard_html": (
        "harness_memory/dashboard/html.py",
        ["tests/test_dashboard_rendering_behaviour.py", "tests/test_dashboard.py"],
        "not token and not serve and not dashboard_command and not access_log and not actions",
    ),
    "dashboard_svg": (
        "harness_memory/dashboard/svg.py",
        ["tests/test_dashboard_rendering_behaviour.py", "tests/test_dashboard.py"],
        "not token and not serve and not dashboard_command and not access_log and not actions",
    ),
    "dashboard_pages": (
        "harness_memory/dashboard/pages.py",
        [
            "tests/test_dashboard_pages_behaviour.py",
            "tests/test_dashboard_rendering_behaviour.py",
            "tests/test_dashboard.py",
        ],
        "not token and not serve and not dashboard_command and not access_log",
    ),
    # the typed errors: their classes are read by every file; what can be mutated is the one error that builds
    # its own message (an unknown memory type names the known ones)
    "errors": (
        "harness_memory/errors.py",
        ["tests/test_memory_types_behaviour.py", "tests/test_remember.py"],
        "",
    ),
}
# The test files written for issue 18. By default they run first (they are the fastest to fail). With
# --old-first they run after the module's older test files, so one run measures both scores: "before"
# counts only the mutants an older file kills (-x stops at the first failing test, in file order).
ROUND_TESTS = frozenset(
    {
        "tests/test_redact_patterns.py",
        "tests/test_consolidate_behaviour.py",
        "tests/test_decay_behaviour.py",
        "tests/test_writes_behaviour.py",
        "tests/test_ranking_direction.py",
        "tests/test_ledger_levels.py",
        "tests/test_error_signatures_behaviour.py",
        "tests/test_recall_channels.py",
        "tests/test_validation_behaviour.py",
        "tests/test_confidence_behaviour.py",
        "tests/test_task_signature_behaviour.py",
        "tests/test_memory_types_behaviour.py",
        "tests/test_lifecycle_behaviour.py",
        "tests/test_tool_calls_behaviour.py",
        "tests/test_episodes_behaviour.py",
        "tests/test_models_behaviour.py",
        "tests/test_summarisers_behaviour.py",
        "tests/test_documents_behaviour.py",
        "tests/test_portability_behaviour.py",
        "tests/test_portable_state_behaviour.py",
        "tests/test_failure_excerpt_behaviour.py",
        "tests/test_jobs_behaviour.py",
        "tests/test_migrate_behaviour.py",
        "tests/test_settings_behaviour.py",
        "tests/test_embedders_behaviour.py",
        "tests/test_langgraph_behaviour.py",
        "tests/test_testing_doubles_behaviour.py",
        "tests/test_backend_targets_behaviour.py",
        "tests/test_vector_index_behaviour.py",
        "tests/test_dashboard_stats_behaviour.py",
        "tests/test_claude_code_behaviour.py",
        "tests/test_backend_vectors_behaviour.py",
        "tests/test_core_error_text_behaviour.py",
        "tests/test_store_behaviour.py",
        "tests/test_sqlite_backend_behaviour.py",
        "tests/test_adapter_run_behaviour.py",
        "tests/test_dashboard_queries_behaviour.py",
        "tests/test_dashboard_rendering_behaviour.py",
        "tests/test_dashboard_pages_behaviour.py",
    }
)
# the default set of a run without module names: the nine measured first
CORE = [
    "redact",
    "consolidate",
    "decay",
    "writes",
    "ranking",
    "ledger",
    "error_signatures",
    "recall",
    "validation",
]
# Deselected in every run: the PostgreSQL half (it needs the session's server and these modules'
# SQL is exercised by the SQLite half; run it with --keyword "" to include it), and tests that
# time the code (wall or CPU bounds), which fail at random under load and would count a mutant as killed.
TIMED = (
    "not time_grows_linearly and not redacted_quickly and not signing_speed_is_linear and not linear_time "
    "and not costs_little"
)
KEYWORD = f"not postgres and {TIMED}"
# Modules whose tests are the PostgreSQL half: their default keyword keeps it (the timed tests still go), and
# the driver starts one server (tests/pgtestdb.py) before forking, handed to every mutant's tests through
# HARNESS_MEMORY_TEST_PG_URL, so a mutant does not pay a server start.
PG_MODULES = frozenset({"postgres_backend"})

# Heavy third-party imports done once in the parent, so each forked child starts warm. Never
# harness_memory itself: a child must import the mutant.
PRELOAD = [
    "pytest",
    "_pytest.python",
    "_pytest.assertion.rewrite",
    "hypothesis",
    "hypothesis.strategies",
    "numpy",
    "sqlean",
    "sqlite_vec",
    "pydantic",
    "pydantic_settings",
    "apscheduler",
    "httpx",
    "psycopg",
    "langsmith.testing",
    "schemathesis",
]

BINOPS = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.Mult,
    ast.Pow: ast.Mult,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}
CMPOPS = {
    ast.Lt: [ast.LtE, ast.Gt],
    ast.LtE: [ast.Lt, ast.GtE],
    ast.Gt: [ast.GtE, ast.Lt],
    ast.GtE: [ast.Gt, ast.LtE],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
}
SYMBOL = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.And: "and",
    ast.Or: "or",
}
DELETABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Continue, ast.Break, ast.Delete)


@dataclass
class Mutant:
    index: int  # position in the module's full list of sites (stable for unchanged source)
    node: int  # the node's position in walk order
    op: str  # which operator
    arg: str  # the operator's choice (e.g. the replacement comparison)
    line: int
    col: int
    desc: str
    source: str  # the original line, stripped
    scope: str  # enclosing qualname
    end_line: int = 0  # the node's last line (a site is in a --lines / --since-commit range when any line is)
    fingerprint: str = ""
    status: str = ""  # killed | timeout | survived | equivalent | (empty: not run)
    killed_by: str = ""
    seconds: float = 0.0
    reason: str = ""  # why equivalent


def _walk(tree: ast.AST):
    """Every node in a deterministic order with (parent, field, index in a list field)."""
    stack = [(tree, None, None, None)]
    while stack:
        node, parent, fld, idx = stack.pop()
        yield node, parent, fld, idx
        children = []
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                children += [(v, node, name, i) for i, v in enumerate(value) if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                children.append((value, node, name, None))
        stack.extend(reversed(children))


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """ids of nodes not worth mutating: annotations, docstrings, TYPE_CHECKING blocks, __all__,
    f-string internals (changing those is mostly message text)."""
    skip: set[int] = set()

    def mark(n):
        for sub in ast.walk(n):
            skip.add(id(sub))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns:
                mark(node.returns)
            for a in (
                node.args.args
                + node.args.kwonlyargs
                + node.args.posonlyargs
                + [x for x in (node.args.vararg, node.args.kwarg) if x]
            ):
                if a.annotation:
                    mark(a.annotation)
            for d in node.decorator_list:
                mark(d)
        if isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                mark(first)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            mark(node)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            mark(node)
        if isinstance(node, ast.JoinedStr):
            for v in node.values:
                if isinstance(v, ast.Constant):
                    skip.add(id(v))
            skip.add(id(node))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mark(node)
    return skip


def _scopes(tree: ast.AST) -> dict[int, str]:
    out: dict[int, str] = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}" if prefix else child.name
            out[id(child)] = name
            visit(child, name)

    visit(tree, "")
    return out


def _const_change(value):
    if isinstance(value, bool):
        return (not value), f"{value} -> {not value}"
    if isinstance(value, int):
        return value + 1, f"{value} -> {value + 1}"
    if isinstance(value, float):
        new = value * 2 if value not in (0.0, 1.0) else value + 1.0
        return new, f"{value} -> {new}"
    if isinstance(value, str):
        return f"XX{value}XX", f"{value[:30]!r} -> 'XX...XX'"
    return None, ""


def sites(source: str) -> list[Mutant]:
    """Every mutation of a module's source, in a stable order."""
    tree = ast.parse(source)
    skip = _skipped_nodes(tree)
    scope = _scopes(tree)
    lines = source.splitlines()
    out: list[Mutant] = []
    nodes: list[ast.AST] = []

    def add(i, node, op, arg, desc):
        line = getattr(node, "lineno", 0)
        nodes.append(node)
        out.append(
            Mutant(
                len(out),
                i,
                op,
                arg,
                line,
                getattr(node, "col_offset", 0),
                desc,
                lines[line - 1].strip() if line else "",
                scope.get(id(node), ""),
                getattr(node, "end_lineno", None) or line,
            )
        )

    for i, (node, parent, fld, _idx) in enumerate(_walk(tree)):
        if id(node) in skip:
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
            add(i, node, "binop", "", f"{SYMBOL[type(node.op)]} -> {SYMBOL[BINOPS[type(node.op)]]}")
        elif isinstance(node, ast.AugAssign) and type(node.op) in BINOPS:
            add(i, node, "augassign", "", f"{SYMBOL[type(node.op)]}= -> {SYMBOL[BINOPS[type(node.op)]]}=")
        elif isinstance(node, ast.Compare):
            for k, cmp in enumerate(node.ops):
                for j, new in enumerate(CMPOPS.get(type(cmp), [])):
                    add(i, node, "compare", f"{k}:{j}", f"{SYMBOL[type(cmp)]} -> {SYMBOL[new]}")
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            add(i, node, "boolop", "", f"{SYMBOL[type(node.op)]} -> {SYMBOL[new]}")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)) and parent is not None:
            add(i, node, "unary", "", "drop 'not'" if isinstance(node.op, ast.Not) else "drop unary '-'")
        elif isinstance(node, ast.Constant) and not (isinstance(parent, ast.UnaryOp)):
            new, desc = _const_change(node.value)
            if desc:
                add(i, node, "const", "", desc)
        if (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            add(i, node, "return", "", "return None")
        if (
            isinstance(node, DELETABLE)
            and isinstance(parent, ast.AST)
            and fld in ("body", "orelse", "finalbody")
            and parent is not tree
        ):
            add(i, node, "delete", "", f"delete {type(node).__name__.lower()} statement")
    # fingerprints: independent of line numbers and of formatting (comments, line breaks, quotes,
    # parentheses): the enclosing scope, the mutated code as ast.unparse prints it, the operator and the
    # occurrence among equal keys (in walk order)
    context = _contexts(tree)
    seen: dict[str, int] = {}
    for m, node in zip(out, nodes, strict=True):
        base = f"{m.scope}|{context(node)}|{m.op}|{m.desc}"
        k = seen.get(base, 0)
        seen[base] = k + 1
        m.fingerprint = hashlib.sha1(f"{base}|{k}".encode()).hexdigest()[:12]
    return out


def changed_lines(rel: str, rev: str) -> set[int]:
    """The lines of ``rel`` (in the working tree) that ``git diff -U0 rev`` marks as added or changed."""
    diff = subprocess.run(
        ["git", "diff", "-U0", "--no-color", "--no-ext-diff", rev, "--", rel],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    out: set[int] = set()
    for ln in diff.splitlines():
        if ln.startswith("@@"):
            new = ln.split()[2]  # +start[,count]
            start, _, count = new[1:].partition(",")
            n = int(count) if count else 1
            out.update(range(int(start), int(start) + n))
    return out


def parse_lines(spec: str) -> set[int]:
    """``FROM-TO`` (inclusive, 1-based) or ``N`` as a set of line numbers."""
    a, _, b = spec.partition("-")
    lo, hi = int(a), int(b or a)
    if lo < 1 or hi < lo:
        raise ValueError(f"--lines {spec!r}: want FROM-TO with 1 <= FROM <= TO")
    return set(range(lo, hi + 1))


def in_lines(m: Mutant, wanted: set[int]) -> bool:
    """Whether any line of the mutated node is in ``wanted``."""
    return any(n in wanted for n in range(m.line, max(m.line, m.end_line) + 1))


def _contexts(tree: ast.AST):
    """A function giving a node's context as normalised code: the smallest statement holding it, or for a
    node in a compound statement's header (an ``if`` test, a ``for`` iterable, a default argument, an
    ``except`` type) that part of the header only, never the body. Formatting does not change it."""
    parent: dict[int, tuple[ast.AST, str]] = {}
    for node, par, fld, _idx in _walk(tree):
        if par is not None:
            parent[id(node)] = (par, fld)
    bodies = ("body", "orelse", "finalbody", "handlers", "cases")

    def context(node: ast.AST) -> str:
        cur, via = node, None
        while not isinstance(cur, (ast.stmt, ast.excepthandler, ast.match_case)) and id(cur) in parent:
            via = cur
            cur = parent[id(cur)][0]
        if via is None or not any(getattr(cur, b, None) for b in bodies):
            return ast.unparse(cur)  # a simple statement (or the node is the statement)
        fld = parent[id(via)][1]
        value = getattr(cur, fld)
        parts = value if isinstance(value, list) else [value]
        return f"{type(cur).__name__}.{fld}: " + ", ".join(ast.unparse(v) for v in parts)

    return context


def mutate(source: str, m: Mutant) -> str:
    """The module's source with one mutation applied."""
    tree = ast.parse(source)
    for i, (node, parent, fld, idx) in enumerate(_walk(tree)):
        if i != m.node:
            continue
        if m.op == "binop" or m.op == "augassign":
            node.op = BINOPS[type(node.op)]()
        elif m.op == "compare":
            k, j = (int(x) for x in m.arg.split(":"))
            node.ops[k] = CMPOPS[type(node.ops[k])][j]()
        elif m.op == "boolop":
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif m.op == "unary":
            _replace(parent, fld, idx, node.operand)
        elif m.op == "const":
            node.value = _const_change(node.value)[0]
        elif m.op == "return":
            node.value = ast.Constant(None)
        elif m.op == "delete":
            _replace(parent, fld, idx, ast.Pass())
        break
    else:
        raise ValueError(f"no node {m.node}")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _replace(parent, fld, idx, new):
    if idx is None:
        setattr(parent, fld, new)
    else:
        getattr(parent, fld)[idx] = new


def load_equivalent() -> dict[str, dict]:
    if not EQUIVALENT.exists():
        return {}
    return {f"{e['module']}:{e['fingerprint']}": e for e in json.loads(EQUIVALENT.read_text())}


# -- the scratch tree and the fork server ---------------------------------------------------------


def prepare_tree(work: Path) -> None:
    """Copy the working tree's files (tracked, and untracked ones git does not ignore) to ``work``."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    for rel in files.decode().split("\0"):
        if not rel or rel.startswith(("benchmarks/mutation/", ".git")):
            continue
        src, dst = ROOT / rel, work / rel
        if not src.is_file():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    # harness_memory.jobs and .migrations live at the top level; the editable install maps them to the
    # real tree, so the copy maps them by symlinks inside its own package
    for name in ("jobs", "migrations"):
        link = work / "harness_memory" / name
        if not link.exists():
            link.symlink_to(Path("..") / name)


def preload() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import importlib
    from importlib.metadata import entry_points

    plugins = [e.value.split(":")[0] for e in entry_points(group="pytest11") if not e.value.startswith("xdist")]
    for name in PRELOAD + plugins:
        try:
            importlib.import_module(name)
        except ImportError:
            continue


def run_tests(
    work: Path, tests: list[str], timeout: float, log: Path, keyword: str = KEYWORD
) -> tuple[str, float, str]:
    """Fork a child that runs pytest on ``tests`` in ``work``: ('pass'|'fail'|'timeout', seconds, first failure)."""
    args = [
        "-o",
        "addopts=",
        "-p",
        "no:xdist",
        "-p",
        "no:cacheprovider",
        "-x",
        "-q",
        *(["-k", keyword] if keyword else []),
        *[t for t in tests if (work / t.split("::")[0]).exists()],
    ]
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        code = 3
        try:
            os.setpgid(0, 0)
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            import pytest

            code = int(pytest.main(args))
        finally:
            os._exit(code)
    deadline = start + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "timeout", time.monotonic() - start, ""
        time.sleep(0.02)
    took = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    first = ""
    if code != 0:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith(("FAILED ", "ERROR ")):
                first = line.split(" - ")[0]
                break
    return ("pass" if code == 0 else "fail"), took, first


def _start_postgres() -> None:
    """One PostgreSQL server for every mutant's tests (tests/pgtestdb.py starts it once per process; the
    forked children find its URL in HARNESS_MEMORY_TEST_PG_URL). Removed when the driver exits."""
    if os.environ.get("HARNESS_MEMORY_TEST_PG_URL"):
        return
    import pgtestdb  # tests/ is on sys.path

    os.environ["HARNESS_MEMORY_TEST_PG_URL"] = pgtestdb.base_url()


def run_module(
    name: str,
    work: Path,
    *,
    max_mutants: int,
    seed: int,
    only: list[str] | None,
    factor: float,
    keyword: str = KEYWORD,
    skip_tests: tuple[str, ...] = (),
    old_first: bool = False,
    lines: list[str] | None = None,
    since: str | None = None,
) -> dict:
    rel, tests, narrow = MODULES[name]
    tests = [t for t in tests if t not in skip_tests]
    # this round's files first (the fastest to fail), or with --old-first last, whatever MODULES' order
    new = [t for t in tests if t.split("::")[0] in ROUND_TESTS]
    old = [t for t in tests if t.split("::")[0] not in ROUND_TESTS]
    tests = old + new if old_first else new + old
    if name in PG_MODULES and keyword == KEYWORD:
        keyword = TIMED
        _start_postgres()
    if narrow:
        keyword = f"({keyword}) and ({narrow})" if keyword else narrow
    target = work / rel
    original = target.read_text()
    everything = sites(original)
    equivalent = load_equivalent()
    current = {f"{name}:{m.fingerprint}" for m in everything}
    for key, e in equivalent.items():
        if key.startswith(f"{name}:") and key not in current:
            print(f"{name}: equivalent.json entry matches no mutant of the source now: {e['desc']}", flush=True)
    # the sites the sample is drawn from: all, or those on the lines asked for (--lines, --since-commit)
    pool = everything
    if lines or since:
        wanted: set[int] = set()
        for spec in lines or ():
            wanted |= parse_lines(spec)
        if since:
            wanted |= changed_lines(rel, since)
        pool = [m for m in everything if in_lines(m, wanted)]
    if only is not None:
        chosen = [m for m in everything if m.fingerprint in only]
    else:
        rng = random.Random(f"{seed}:{name}")
        chosen = sorted(rng.sample(pool, min(max_mutants, len(pool))), key=lambda m: m.index)
    log = work / f".mutation-{name}.log"
    status, base, first = run_tests(work, tests, 3600, log, keyword)
    if status != "pass":
        raise SystemExit(f"{name}: the unmutated tests fail ({first}); see {log}")
    timeout = base * factor + 10
    of = f"{len(pool)} (of {len(everything)})" if pool is not everything else f"{len(everything)}"
    print(f"{name}: {len(chosen)} of {of} mutants; tests {base:.1f}s, timeout {timeout:.0f}s", flush=True)
    try:
        for n, m in enumerate(chosen, 1):
            eq = equivalent.get(f"{name}:{m.fingerprint}")
            if eq:
                m.status, m.reason = "equivalent", eq["reason"]
                continue
            target.write_text(mutate(original, m))
            result, m.seconds, m.killed_by = run_tests(work, tests, timeout, log, keyword)
            m.status = {"pass": "survived", "fail": "killed", "timeout": "timeout"}[result]
            print(
                f"  [{n}/{len(chosen)}] {m.status:8} L{m.line}:{m.col} {m.desc}  ({m.seconds:.1f}s) {m.killed_by}",
                flush=True,
            )
    finally:
        target.write_text(original)
    return {
        "module": name,
        "file": rel,
        "tests": tests,
        "old_first": old_first,
        "keyword": keyword,
        "total_sites": len(pool),
        "all_sites": len(everything),
        "lines": lines or [],
        "since_commit": since or "",
        "seed": seed,
        "baseline_seconds": round(base, 2),
        "mutants": [asdict(m) for m in chosen],
    }


# The scores issue 18 reports for the tests of its day (an independent driver, 515 mutants over these nine
# modules): shown beside this driver's score for context, not as the same measurement.
ISSUE_18_SCORES = {
    "redact": 23,
    "consolidate": 45,
    "decay": 47,
    "writes": 53,
    "ranking": 57,
    "ledger": 58,
    "error_signatures": 68,
    "recall": 73,
    "validation": 75,
}


def _killed_before(m: dict) -> bool:
    """Killed by a test file older than this round's (a timeout cannot be attributed: it counts as new)."""
    return m["status"] == "killed" and m["killed_by"].split()[-1].split("::")[0] not in ROUND_TESTS


def score(result: dict, *, before: bool = False) -> tuple[int, int, int, int, float]:
    ms = result["mutants"]
    if before:
        killed = sum(_killed_before(m) for m in ms)
        survived = sum(m["status"] in ("killed", "timeout", "survived") for m in ms) - killed
    else:
        killed = sum(m["status"] in ("killed", "timeout") for m in ms)
        survived = sum(m["status"] == "survived" for m in ms)
    eq = sum(m["status"] == "equivalent" for m in ms)
    counted = killed + survived
    return killed, survived, eq, len(ms), (100.0 * killed / counted if counted else 100.0)


def _filtered(r: dict) -> str:
    """How a result's sites were restricted (--since-commit, --lines), for the report's sample column."""
    how = [f"new since {r['since_commit']}"] if r.get("since_commit") else []
    how += [f"lines {x}" for x in r.get("lines") or []]
    return f" ({', '.join(how)}; {r['all_sites']} in all)" if how else ""


def write_report() -> None:
    """REPORT.md from the saved results: the score per module now and, where measured, before this
    round's tests (the kills by the older test files of the same run)."""
    rows, detail = [], []
    for name in MODULES:
        path = OUT / f"{name}.json"
        if not path.exists():
            continue
        r = json.loads(path.read_text())
        killed, survived, eq, n, pct = score(r)
        before = score(r, before=True)[4] if r.get("old_first") else None
        issue = ISSUE_18_SCORES.get(name)
        rows.append(
            f"| {name} | `{r['file']}` | {'' if issue is None else f'{issue}%'} | "
            f"{'n/m' if before is None else f'{before:.1f}%'} | **{pct:.1f}%** | "
            f"{n} of {r['total_sites']}{_filtered(r)} | {killed} | {survived} | {eq} | {r['baseline_seconds']:.1f} s |"
        )
        surv = [m for m in r["mutants"] if m["status"] == "survived"]
        eqs = [m for m in r["mutants"] if m["status"] == "equivalent"]
        gone = [m for m in r["mutants"] if m["status"] == "removed"]
        if surv or eqs or gone:
            detail.append(f"\n### {name}\n")
        if surv:
            detail.append("Survivors (a wrong line no test notices):\n")
            detail += [
                f"- L{m['line']}:{m['col']} `{m['scope'] or '<module>'}`: {m['desc']} in `{m['source'][:90]}`"
                for m in surv
            ]
        if eqs:
            detail.append("\nEquivalent (excluded from the score):\n")
            detail += [
                f"- L{m['line']}:{m['col']} `{m['scope'] or '<module>'}`: {m['desc']} in `{m['source'][:90]}`: "
                f"{m['reason']}"
                for m in eqs
            ]
        if gone:
            detail.append("\nRemoved (the mutated statement changed or left the source after it survived; excluded):\n")
            detail += [f"- `{m['scope'] or '<module>'}`: {m['desc']} in `{m['source'][:90]}`" for m in gone]
    header = [
        "# Mutation report",
        "",
        "Generated by `benchmarks/mutation.py` (see docs/development.md). Each sampled mutant (seed 18, the",
        "sample size in the table) is run against the module's test files (SQLite half, `-p no:xdist -x -q`, timed tests",
        "deselected); a timeout counts as killed; equivalent mutants (benchmarks/mutation/equivalent.json) are",
        "excluded. Score = killed / (killed + survived). *Before*: the share killed by the test files older than",
        "issue 18's, measured when the run put them first (`--old-first`; n/m: not measured). *Issue 18*: the",
        "score the issue reports for the tests of its day (another driver and sample: context, not a baseline).",
        "",
        "| module | file | issue 18 | before | score | mutants (sampled of sites) | killed | survived | equivalent "
        "| tests |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "REPORT.md").write_text(
        "\n".join(header + rows + ["", "## Survivors and equivalent mutants"] + detail) + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("modules", nargs="*", help=f"short names (default: the core: {' '.join(CORE)})")
    p.add_argument("--max", type=int, default=80, help="mutants sampled per module (default 80)")
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--factor", type=float, default=3.0, help="timeout = baseline * factor + 10 s")
    p.add_argument("--survivors", action="store_true", help="re-run only the last run's survivors")
    p.add_argument("--list", action="store_true", help="print the mutation sites and exit")
    p.add_argument("--report", action="store_true", help="only rewrite REPORT.md from the saved results")
    p.add_argument("--work", type=Path, help="scratch tree (default: a new temporary directory)")
    p.add_argument("--keyword", default=KEYWORD, help=f"pytest -k expression (default {KEYWORD!r})")
    p.add_argument(
        "--skip-test",
        action="append",
        default=[],
        metavar="FILE",
        help="leave this test file out (e.g. to measure the score before it was written)",
    )
    p.add_argument(
        "--old-first",
        action="store_true",
        help="run the older test files before this round's (slower; measures the 'before' score too)",
    )
    p.add_argument(
        "--lines",
        action="append",
        default=[],
        metavar="FROM-TO",
        help="sample only sites on these lines of the module's file (repeatable)",
    )
    p.add_argument(
        "--since-commit",
        metavar="REV",
        help="sample only sites on lines git diff -U0 REV marks as added or changed (the new code)",
    )
    p.add_argument("--out", type=Path, default=OUT, help="where results go (default benchmarks/mutation)")
    p.add_argument("--no-save", action="store_true", help="do not write results (a trial run)")
    a = p.parse_args(argv)
    names = a.modules or CORE
    for n in names:
        if n not in MODULES:
            p.error(f"unknown module {n!r}; known: {', '.join(MODULES)}")
        if a.survivors and not (a.out / f"{n}.json").exists():
            p.error(f"--survivors: {n} has no saved result in {a.out} (run it without --survivors first)")
    if a.report:
        write_report()
        return 0
    for spec in a.lines:
        try:
            parse_lines(spec)
        except ValueError as e:
            p.error(str(e))
    if a.list:
        for n in names:
            listed = sites((ROOT / MODULES[n][0]).read_text())
            if a.lines or a.since_commit:
                wanted = set().union(*(parse_lines(x) for x in a.lines))
                if a.since_commit:
                    wanted |= changed_lines(MODULES[n][0], a.since_commit)
                listed = [m for m in listed if in_lines(m, wanted)]
            for m in listed:
                print(f"{n} {m.fingerprint} L{m.line} {m.op:9} {m.desc:30} {m.source[:70]}")
        return 0
    work = a.work or Path(tempfile.mkdtemp(prefix="hm-mutation-"))
    prepare_tree(work)
    os.chdir(work)
    sys.path.insert(0, str(work))
    sys.path.insert(1, str(work / "tests"))
    sys.dont_write_bytecode = True
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.environ["PYTHONPATH"] = os.pathsep.join([str(work), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    preload()
    OUT.mkdir(parents=True, exist_ok=True)
    for n in names:
        only = None
        if a.survivors:
            prev = json.loads((a.out / f"{n}.json").read_text())
            only = [m["fingerprint"] for m in prev["mutants"] if m["status"] == "survived"]
        started = time.monotonic()
        result = run_module(
            n,
            work,
            max_mutants=a.max,
            seed=a.seed,
            only=only,
            factor=a.factor,
            keyword=a.keyword,
            skip_tests=tuple(a.skip_test),
            old_first=a.old_first,
            lines=a.lines,
            since=a.since_commit,
        )
        result["seconds"] = round(time.monotonic() - started, 1)
        if a.survivors:  # merge: the re-run decides the survivors' status, the rest stay as measured
            prev = json.loads((a.out / f"{n}.json").read_text())
            by_fp = {m["fingerprint"]: m for m in result["mutants"]}
            prev["mutants"] = [by_fp.get(m["fingerprint"], m) for m in prev["mutants"]]
            for m in prev["mutants"]:  # a survivor whose code is gone from the source: not a mutant any more
                if m["status"] == "survived" and m["fingerprint"] not in by_fp:
                    m["status"], m["reason"] = (
                        "removed",
                        "the mutated statement changed or left the source after the sample",
                    )
            prev["tests"], prev["baseline_seconds"] = result["tests"], result["baseline_seconds"]
            result = prev
        killed, survived, eq, total, pct = score(result)
        print(f"{n}: {pct:.1f}% ({killed} killed, {survived} survived, {eq} equivalent of {total})", flush=True)
        if not a.no_save:
            a.out.mkdir(parents=True, exist_ok=True)
            (a.out / f"{n}.json").write_text(json.dumps(result, indent=1) + "\n")
            write_report()
    if a.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
