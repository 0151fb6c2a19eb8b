"""Schema migrations of the results store, in the style of Simon Willison's llm.

Each migration is a function ``mNNN_what(db)`` registered with :func:`migration`. They run in order,
each exactly once, inside one ``BEGIN IMMEDIATE`` transaction, and their names are recorded in the
``_migrations`` table (name, applied_at). ``BEGIN IMMEDIATE`` takes the write lock before reading the
list of applied migrations, so two processes opening the same new file at once cannot both apply one.

Never edit a migration that has shipped: add ``m002_...`` instead. ``tests/test_store.py`` pins the
final schema, so a change to it is always deliberate.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

__all__ = ["MIGRATIONS", "applied_migrations", "migrate", "migration", "pending_migrations"]

Migration = Callable[[sqlite3.Connection], None]

MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration (registration order is application order)."""
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    # One row per `eval`/`run` invocation. config_json holds run settings only, never secrets.
    db.execute("""
        CREATE TABLE evaluations (
            id TEXT PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,
            benchmark_id TEXT,
            benchmark_version TEXT,
            config_json TEXT NOT NULL DEFAULT '{}',
            tool_version TEXT
        )""")
    db.execute("CREATE INDEX evaluations_started_at ON evaluations (started_at)")
    # The aggregated SkillCompletionReport of each skill, without its taskResults (those are rows below).
    db.execute("""
        CREATE TABLE skill_reports (
            evaluation_id TEXT NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
            skill_id TEXT NOT NULL,
            skill_version TEXT,
            report_json TEXT NOT NULL,
            completion_rate REAL,
            composite_score REAL,
            PRIMARY KEY (evaluation_id, skill_id)
        )""")
    db.execute("CREATE INDEX skill_reports_skill ON skill_reports (skill_id)")
    # One row per finished (skill, task, run), committed as it finishes.
    db.execute("""
        CREATE TABLE task_results (
            id INTEGER PRIMARY KEY,
            evaluation_id TEXT NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
            skill_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            run_id INTEGER NOT NULL,
            status TEXT NOT NULL,
            score REAL,
            latency_ms REAL,
            error TEXT,
            scorer_type TEXT,
            reason TEXT,
            output_json TEXT,
            usage_json TEXT,
            attempts INTEGER,
            extra_json TEXT,
            finished_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX task_results_evaluation ON task_results (evaluation_id)")
    db.execute("CREATE INDEX task_results_skill_task ON task_results (skill_id, task_id)")


@migration
def m002_evaluation_outcome(db: sqlite3.Connection) -> None:
    # Why an evaluation failed, and which process runs it: a 'running' evaluation whose process is gone
    # (killed, or unable to write its end) is read as failed, so none stays running forever.
    db.execute("ALTER TABLE evaluations ADD COLUMN error TEXT")
    db.execute("ALTER TABLE evaluations ADD COLUMN pid INTEGER")
    db.execute("ALTER TABLE evaluations ADD COLUMN host TEXT")


@migration
def m003_judge_cache(db: sqlite3.Connection) -> None:
    # Judges' verdicts by Judge.cache_key (a hash of the backend, model, settings, prompt version and request),
    # so grading the same output twice asks nobody. Only verdicts are kept, never judge errors.
    db.execute("""
        CREATE TABLE judge_cache (
            key TEXT PRIMARY KEY,
            verdict_json TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""")


@migration
def m004_paired_runs(db: sqlite3.Connection) -> None:
    # One row per iteration of `eval-skills paired` (a resumed iteration keeps its row).
    db.execute("""
        CREATE TABLE paired_iterations (
            id TEXT PRIMARY KEY,
            workspace TEXT NOT NULL,
            iteration INTEGER NOT NULL,
            skill_name TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,
            config_json TEXT NOT NULL DEFAULT '{}',
            summary_json TEXT,
            tool_version TEXT,
            UNIQUE (workspace, iteration)
        )""")
    # One row per finished agent run, with its grade once graded.
    db.execute("""
        CREATE TABLE paired_runs (
            iteration_id TEXT NOT NULL REFERENCES paired_iterations (id) ON DELETE CASCADE,
            run_id TEXT NOT NULL,
            eval_id TEXT NOT NULL,
            arm TEXT NOT NULL,
            run_number INTEGER NOT NULL,
            status TEXT NOT NULL,
            error TEXT,
            response TEXT,
            duration_s REAL,
            total_tokens INTEGER,
            token_measurement TEXT,
            usage_json TEXT,
            tool_calls INTEGER,
            skills_invoked_json TEXT,
            passed INTEGER,
            failed INTEGER,
            total INTEGER,
            ungraded INTEGER,
            pass_rate REAL,
            started_at TEXT,
            finished_at TEXT NOT NULL,
            PRIMARY KEY (iteration_id, run_id)
        )""")
    db.execute("CREATE INDEX paired_runs_eval ON paired_runs (iteration_id, eval_id, arm)")
    # One row per verdict: kind grade (the judge on a run), checks (the assertion engine on a run) or
    # compare (the blind A/B of a run pair, subject eval-<id>-run-<k>).
    db.execute("""
        CREATE TABLE paired_verdicts (
            id INTEGER PRIMARY KEY,
            iteration_id TEXT NOT NULL REFERENCES paired_iterations (id) ON DELETE CASCADE,
            subject TEXT NOT NULL,
            kind TEXT NOT NULL,
            backend TEXT,
            model TEXT,
            prompt_version TEXT,
            verdict_json TEXT,
            error TEXT,
            attempts INTEGER,
            cached INTEGER,
            duration_s REAL,
            finished_at TEXT NOT NULL,
            UNIQUE (iteration_id, subject, kind)
        )""")


@migration
def m005_routing_runs(db: sqlite3.Connection) -> None:
    # One row per `routing` invocation: the skill, the agent, the settings and the overall metrics.
    db.execute("""
        CREATE TABLE routing_tests (
            id TEXT PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,
            skill_name TEXT NOT NULL,
            agent TEXT,
            model TEXT,
            config_json TEXT NOT NULL DEFAULT '{}',
            metrics_json TEXT,
            f1 REAL,
            accuracy REAL,
            results_path TEXT,
            tool_version TEXT
        )""")
    db.execute("CREATE INDEX routing_tests_skill ON routing_tests (skill_name, started_at)")
    # One row per finished agent run of one query, committed as it finishes. triggered is NULL for an error.
    db.execute("""
        CREATE TABLE routing_runs (
            id INTEGER PRIMARY KEY,
            routing_id TEXT NOT NULL REFERENCES routing_tests (id) ON DELETE CASCADE,
            query_index INTEGER NOT NULL,
            query TEXT NOT NULL,
            should_trigger INTEGER NOT NULL,
            invocation_type TEXT,
            run_number INTEGER NOT NULL,
            status TEXT NOT NULL,
            triggered INTEGER,
            skills_invoked_json TEXT NOT NULL DEFAULT '[]',
            error TEXT,
            duration_s REAL,
            usage_json TEXT,
            finished_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX routing_runs_test ON routing_runs (routing_id)")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def applied_migrations(db: sqlite3.Connection) -> list[str]:
    """Names recorded in ``_migrations``, in the order they were applied ([] for a new file)."""
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'").fetchone()
    if not exists:
        return []
    return [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY rowid")]


def pending_migrations(db: sqlite3.Connection) -> list[Migration]:
    done = set(applied_migrations(db))
    return [fn for fn in MIGRATIONS if fn.__name__ not in done]


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply the pending migrations; return the names applied now ([] when up to date).

    ``db`` must be in autocommit mode (``isolation_level=None``): this function owns the transaction.
    """
    if not pending_migrations(db):  # the common case: a read, no write lock
        return []
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        todo = pending_migrations(db)  # again, now that we hold the write lock
        for fn in todo:
            fn(db)
            db.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (fn.__name__, _now()))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return [fn.__name__ for fn in todo]
