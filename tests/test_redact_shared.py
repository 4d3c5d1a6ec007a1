"""Many findings are redacted in blocks shared among forked processes: the document is the same
byte for byte as with one process, and no secret a worker cleaned comes back. Run in a process
of its own (a forked worker needs a process with no other thread, which xdist's is not)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import copy, json, os, sys
from scanner.findings import redact

seen = set()
document = redact.Redactor.document
def recorded(self, value):
    if isinstance(value, list) and value and isinstance(value[0], dict) and "policy_id" in value[0]:
        seen.add(os.getpid())  # a block of findings, cleaned in this process
        with open(sys.argv[1], "a") as out:
            out.write(f"{os.getpid()}\\n")
    return document(self, value)
redact.Redactor.document = recorded

SECRET = "marked-secret-value-0123"
KEY = "AKIA" + "Z7QWERTYUIOPASDF"  # shaped like an AWS access key id
def finding(i):
    return {"id": f"f{i}", "policy_id": f"P-{i % 7}", "status": "FAIL",
            "message": f"value {SECRET} of resource {i}" if i % 97 == 0 else f"resource {i}",
            "resource": {"name": f"r{i}", "tags": {"api_token": "x" * 20} if i % 50 == 0 else {}},
            "evidence": {"key": KEY if i % 61 == 0 else "none", "n": i, "bad": float("nan"),
                         "items": list(range(i % 300))},
            "remediation": {"text": "Set it."}}
doc = {"schema_version": "1", "summary": {"note": SECRET},
       "findings": [finding(i) for i in range(12000)]}
os.environ["GPUAUDIT_WORKERS"] = "1"
one = json.dumps(redact.redact_document(copy.deepcopy(doc), [SECRET]), sort_keys=True)
os.environ["GPUAUDIT_WORKERS"] = "2"
two = json.dumps(redact.redact_document(copy.deepcopy(doc), [SECRET]), sort_keys=True)
print(json.dumps({"same": one == two, "secret": SECRET in two or KEY in two,
                  "sensitive": two.count("(sensitive)"),
                  "findings": len(json.loads(two)["findings"])}))
"""


def test_findings_redacted_in_shared_blocks_are_the_same(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(pids)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out == {"same": True, "secret": False, "sensitive": 12000 // 97 + 1 + 1,
                   "findings": 12000}
    assert len(set(pids.read_text().split())) >= 2  # a worker cleaned some of the blocks


# Most blocks need no cleaning, and a worker sends back only those that changed: each way a
# block can change is here alone (in every block, or in one), so a change the worker does not
# notice would leave a secret, an uncut list or a NaN in the document.
CHANGES = """
import copy, json, os, sys
from scanner.findings import redact

SECRET = "marked-secret-value-0123"
KEY = "AKIA" + "Z7QWERTYUIOPASDF"
change, every = sys.argv[1], sys.argv[2] == "every"
def finding(i):
    f = {"id": f"f{i}", "policy_id": "P-1", "status": "FAIL", "message": f"resource {i}",
         "resource": {"name": f"r{i}", "tags": {"team": "ml"}},
         "evidence": {"n": i, "items": [1, 2]}, "remediation": {"text": "Set it."}}
    if every or i == 7777:
        if change == "remediation":  # the same remediation in each block: cleaned once
            f["remediation"] = {"text": f"Rotate {SECRET} now."}
        elif change == "tag-key":
            f["resource"]["tags"] = {KEY: "x"}
        elif change == "named":
            f["resource"]["tags"] = {"api_token": "abcdefghij0123456789"}
        elif change == "long-list":
            f["evidence"]["items"] = list(range(500))
        elif change == "tuple":
            f["evidence"]["items"] = (1, 2)
        elif change == "nan":
            f["evidence"]["n"] = float("nan")
        elif change == "text":
            f["message"] = f"value {KEY} of resource {i}"
    return f
doc = {"schema_version": "1", "findings": [finding(i) for i in range(12000)]}
os.environ["GPUAUDIT_WORKERS"] = "1"
one = json.dumps(redact.redact_document(copy.deepcopy(doc), [SECRET]))
os.environ["GPUAUDIT_WORKERS"] = "2"
cleaned = redact.redact_document(copy.deepcopy(doc), [SECRET])
two = json.dumps(cleaned)
def tuples(v):
    if isinstance(v, dict):
        return any(tuples(x) for x in v.values())
    return isinstance(v, tuple) or isinstance(v, list) and any(tuples(x) for x in v)
print(json.dumps({"same": one == two, "secret": SECRET in two or KEY in two,
                  "nan": "NaN" in two, "tuple": tuples(cleaned),
                  "changed": one != json.dumps(doc) or tuples(doc)}))
"""


@pytest.mark.parametrize("every", ["every", "one"])
@pytest.mark.parametrize("change", ["remediation", "tag-key", "named", "long-list", "tuple",
                                    "nan", "text"])
def test_a_block_that_cleaning_changes_comes_back_cleaned(change: str, every: str) -> None:
    proc = subprocess.run([sys.executable, "-c", CHANGES, change, every], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"same": True, "secret": False, "nan": False,
                                       "tuple": False, "changed": True}
