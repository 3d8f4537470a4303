"""Measure secret detectors on tests/secrets_corpus.py: recall, false positives, speed.

    .venv/bin/python tests/measure_redaction.py            # harness-memory's redact()
    .venv/bin/pip install detect-secrets && .venv/bin/python tests/measure_redaction.py

Rows: harness-memory's redact(); v0.1's patterns (from git, when available); detect-secrets
1.5 with its default plugins (provider plugins, keyword, high-entropy strings), used to
redact by replacing every value it reports (file-scan mode, default filters). Figures go to docs/secrets.md.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import secrets_corpus as corpus


def measure(name, redact_fn):
    broad = corpus.broad_corpus()
    missed = [label for label, text, secrets in broad if any(s in redact_fn(text) for s in secrets)]
    neutral = sum(redact_fn(t) != t for t in corpus.NEUTRAL)
    innocent = sum(redact_fn(t) != t for t in corpus.INNOCENT)
    texts = [t for _, t, _ in broad] + corpus.NEUTRAL + corpus.INNOCENT
    t0 = time.perf_counter()
    for _ in range(3):
        for t in texts:
            redact_fn(t)
    per_msg = (time.perf_counter() - t0) / (3 * len(texts))
    mb = ("\n".join(corpus.NEUTRAL * 60 + corpus.INNOCENT * 60) * 4)[:1_000_000]
    t0 = time.perf_counter()
    redact_fn(mb)
    per_mb = time.perf_counter() - t0
    print(
        f"| {name} | {len(broad) - len(missed)}/{len(broad)} ({1 - len(missed) / len(broad):.1%}) | "
        f"{neutral}/{len(corpus.NEUTRAL)} | {innocent}/{len(corpus.INNOCENT)} ({innocent / len(corpus.INNOCENT):.0%}) | "
        f"{per_msg * 1e3:.3f} ms | {per_mb:.2f} s |"
    )
    return missed


def old_patterns():
    try:
        src = subprocess.run(
            ["git", "show", "9e1bc8d:harness_memory/redact.py"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    ns: dict = {}
    exec(compile(src.replace("from __future__ import annotations", ""), "redact_v01", "exec"), ns)
    return lambda t: ns["redact"](t)[0]


def detect_secrets_fn():
    try:
        from detect_secrets.core.scan import _process_line_based_plugins
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    ctx = default_settings()
    ctx.__enter__()  # the settings stay active for the whole measurement

    def run(text: str) -> str:
        # as `detect-secrets scan` treats a file: line-based plugins with the default filters
        # (scan_line() is the unfiltered ad-hoc mode: it reports nearly every word)
        values = {
            s.secret_value
            for s in _process_line_based_plugins(lines=list(enumerate(text.split("\n"), start=1)), filename="log.txt")
            if s.secret_value
        }
        for v in sorted(values, key=len, reverse=True):
            text = text.replace(v, "[REDACTED]")
        return text

    run.settings = ctx  # keep the context alive (its generator would reset the settings when collected)
    return run


def main() -> None:
    from harness_memory.redact import redact_text

    print(
        f"corpus: {len(corpus.broad_corpus())} secrets in context ({len(corpus.SECRETS)} shapes x "
        f"{len(corpus.CONTEXTS)} contexts), {len(corpus.NEUTRAL)} neutral, {len(corpus.INNOCENT)} innocent\n"
    )
    print("| detector | broad corpus caught | neutral changed | innocent changed | per message | 1 MB log |")
    print("|---|---|---|---|---|---|")
    missed = measure("harness-memory redact()", redact_text)
    old = old_patterns()
    if old is not None:
        measure("v0.1 patterns", old)
    ds = detect_secrets_fn()
    if ds is not None:
        ds_missed = measure("detect-secrets 1.5 (default plugins)", ds)
        both = lambda t: ds(redact_text(t))  # noqa: E731
        measure("redact() then detect-secrets", both)
        print("\ndetect-secrets misses by shape:", sorted({m.split("/")[0] for m in ds_missed}))
    print("\nredact() misses:", missed)


if __name__ == "__main__":
    main()
