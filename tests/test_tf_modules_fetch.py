"""`scan --fetch-modules`: git sources (a LOCAL repository made here: git init, commit, tag),
registry modules (a LOCAL registry on 127.0.0.1 speaking the module registry protocol) and
archives, into a cache keyed by source and resolved commit / version; what cannot be fetched
is an error at the module call and a TF-001 UNKNOWN; archives that climb out are refused."""

from __future__ import annotations

import http.server
import io
import json
import shutil
import subprocess
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.scan import ScanOptions, scan_paths
from scanner.sources.terraform.fetch import FetchError, ModuleFetcher, extract

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

TEMPLATE = """variable "name" {{
  type    = string
  default = "gpu"
}}

resource "aws_launch_template" "this" {{
  name_prefix   = var.name
  instance_type = "{itype}"

  block_device_mappings {{
    device_name = "/dev/xvda"
    ebs {{
      volume_size = 200
      encrypted   = {encrypted}
    }}
  }}
}}
"""


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "HOME": str(cwd), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True)
    return done.stdout.decode().strip()


def _commit(repo: Path, files: dict[str, str], tag: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", tag)
    _git(repo, "tag", tag)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A module repository: v1.0.0 and v1.2.0 unencrypted, v2.0.0 encrypted; one module in
    modules/gpu (a //subdir) and one at the top."""
    r = tmp_path / "tf-modules"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    for tag, itype, enc in (("v1.0.0", "g5.xlarge", "false"), ("v1.2.0", "p4d.24xlarge", "false"),
                            ("v2.0.0", "p5.48xlarge", "true")):
        body = TEMPLATE.format(itype=itype, encrypted=enc)
        _commit(r, {"modules/gpu/main.tf": body, "main.tf": body}, tag)
    return r


def _root(tmp_path: Path, call: str) -> Path:
    root = tmp_path / "live"
    root.mkdir(exist_ok=True)
    (root / "main.tf").write_text('provider "aws" {\n  region = "us-east-1"\n}\n\n' + call)
    return root


def _scan(root: Path, cache: Path) -> tuple[Any, dict[tuple[str, str], Any]]:
    result = scan_paths([root], ScanOptions(module_cache=cache))
    found = {(f.policy_id, f.resource["id"]): f for f in evaluate(result.resources,
                                                                  gaps=result.gaps)}
    return result, found


def _types(result: Any) -> dict[str, Any]:
    return {r.id: r.attrs.get("LaunchTemplateData", {}).get("InstanceType")
            for r in result.resources if r.kind == "ec2.launch_template"}


def test_a_git_source_with_ref_and_subdir_is_fetched_and_cached(tmp_path: Path,
                                                                 repo: Path) -> None:
    cache = tmp_path / "cache"
    root = _root(tmp_path, f'module "gpu" {{\n  source = "git::file://{repo}//modules/gpu'
                           f'?ref=v1.2.0"\n  name   = "train"\n}}\n')
    result, found = _scan(root, cache)
    assert result.errors == [] and result.gaps == []
    assert _types(result) == {"module.gpu.aws_launch_template.this": "p4d.24xlarge"}
    lt = found[("EBS-001", "module.gpu.aws_launch_template.this")]
    assert lt.status is Status.FAIL
    assert ("TF-001", "module.gpu") not in found  # read: not reported unread
    assert lt.location["file"].endswith("modules/gpu/main.tf")
    cached = list((cache / "git").iterdir())
    assert len(cached) == 1 and (cached[0] / "modules/gpu/main.tf").is_file()
    assert not (cached[0] / ".git").exists()
    # the same source at another tag is another cache entry (keyed by the resolved commit)
    (root / "main.tf").write_text((root / "main.tf").read_text().replace("v1.2.0", "v2.0.0"))
    result, found = _scan(root, cache)
    assert _types(result) == {"module.gpu.aws_launch_template.this": "p5.48xlarge"}
    assert found[("EBS-001", "module.gpu.aws_launch_template.this")].status is Status.PASS
    assert len(list((cache / "git").iterdir())) == 2


def test_a_commit_pinned_source_is_read_from_the_cache_without_the_remote(
        tmp_path: Path, repo: Path) -> None:
    cache = tmp_path / "cache"
    commit = _git(repo, "rev-list", "-n", "1", "v1.0.0")
    root = _root(tmp_path, f'module "gpu" {{\n  source = "git::file://{repo}?ref={commit}"\n}}\n')
    assert _types(_scan(root, cache)[0]) == {"module.gpu.aws_launch_template.this": "g5.xlarge"}
    shutil.rmtree(repo)  # offline: the pinned commit is in the cache
    result, _ = _scan(root, cache)
    assert result.errors == []
    assert _types(result) == {"module.gpu.aws_launch_template.this": "g5.xlarge"}


def test_a_source_that_cannot_be_fetched_is_an_error_at_the_call_and_unknown(
        tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    root = _root(tmp_path, 'module "gpu" {\n  source = '
                           f'"git::file://{missing}?ref=v1"\n}}\n\n'
                           'module "priv" {\n  source = "git::https://ci:hunter2TOKEN@127.0.0.1:9'
                           '/org/priv.git?ref=v1"\n}\n')
    result, found = _scan(root, tmp_path / "cache")
    errors = {(e.line, e.path.endswith("main.tf")) for e in result.errors}
    assert errors == {(5, True), (9, True)}
    assert all("could not be fetched" in e.reason for e in result.errors)
    for name in ("gpu", "priv"):
        f = found[("TF-001", f"module.{name}")]
        assert f.status is Status.UNKNOWN and "could not be fetched" in f.message
    text = json.dumps([e.as_dict() for e in result.errors]) + json.dumps(
        [f.as_dict() for f in found.values()])
    assert "hunter2TOKEN" not in text and "ci:" not in text


def test_cli_fetch_modules_and_cache_dir(tmp_path: Path, repo: Path) -> None:
    root = _root(tmp_path, f'module "gpu" {{\n  source = "git::file://{repo}?ref=v1.0.0"\n}}\n')
    runner = CliRunner()
    unread = runner.invoke(cli, ["scan", str(root), "-q", "--strict"])
    assert unread.exit_code == 1  # TF-001 UNKNOWN, strict
    fetched = runner.invoke(cli, ["scan", str(root), "-q", "--fetch-modules", "--cache-dir",
                                  str(tmp_path / "c"), "--format", "json", "-o",
                                  str(tmp_path / "r.json")])
    assert fetched.exit_code == 1, fetched.output  # EBS-001 FAIL (high)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert {(f["policy_id"], f["status"]) for f in doc["findings"]} == {("EBS-001", "FAIL")}
    assert runner.invoke(cli, ["scan", str(root), "--cache-dir", "x"]).exit_code == 2


# -- a registry on 127.0.0.1 ------------------------------------------------------------------


class _Registry(http.server.BaseHTTPRequestHandler):
    versions: ClassVar[list[str]] = []
    location: Any = None  # version -> X-Terraform-Get
    files: ClassVar[dict[str, bytes]] = {}
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        if self.path == "/.well-known/terraform.json":
            return self._json({"modules.v1": "/v1/modules/"})
        if self.path == "/v1/modules/acme/gpu/aws/versions":
            return self._json({"modules": [{"versions": [{"version": v}
                                                         for v in self.versions]}]})
        parts = self.path.strip("/").split("/")
        if len(parts) == 7 and parts[:5] == ["v1", "modules", "acme", "gpu", "aws"] \
                and parts[6] == "download":
            self.send_response(204)
            self.send_header("X-Terraform-Get", self.location(parts[5]))
            self.end_headers()
            return None
        if self.path in self.files:
            body = self.files[self.path]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        self.send_response(404)
        self.end_headers()
        return None

    def _json(self, doc: Any) -> None:
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def registry() -> Iterator[tuple[str, type[_Registry]]]:
    handler = type("Handler", (_Registry,), {"seen": [], "files": {}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("constraint", "chosen", "itype"), [
    ("~> 1.0", "1.2.0", "p4d.24xlarge"),  # the newest 1.x, not the 1.3.0 pre-release
    (">= 1.0, < 1.2", "1.0.0", "g5.xlarge"),
    ("!= 2.0.0", "1.2.0", "p4d.24xlarge"),
    ("2.0.0", "2.0.0", "p5.48xlarge"),
])
def test_a_registry_module_resolves_its_version_constraint(
        tmp_path: Path, repo: Path, registry: tuple[str, Any], constraint: str, chosen: str,
        itype: str) -> None:
    host, handler = registry
    handler.versions = ["1.0.0", "1.2.0", "1.3.0-beta1", "2.0.0"]
    handler.location = staticmethod(lambda v: f"git::file://{repo}?ref=v{v}")
    root = _root(tmp_path, f'module "gpu" {{\n  source  = "{host}/acme/gpu/aws"\n'
                           f'  version = "{constraint}"\n}}\n')
    result, found = _scan(root, tmp_path / "cache")
    assert result.errors == []
    assert _types(result) == {"module.gpu.aws_launch_template.this": itype}
    assert f"/v1/modules/acme/gpu/aws/{chosen}/download" in handler.seen
    assert ("TF-001", "module.gpu") not in found


def test_a_registry_module_with_no_matching_version_is_unknown(
        tmp_path: Path, repo: Path, registry: tuple[str, Any]) -> None:
    host, handler = registry
    handler.versions = ["1.0.0", "2.0.0"]
    handler.location = staticmethod(lambda v: f"git::file://{repo}?ref=v{v}")
    root = _root(tmp_path, f'module "gpu" {{\n  source  = "{host}/acme/gpu/aws"\n'
                           '  version = "~> 3.1"\n}\n')
    result, found = _scan(root, tmp_path / "cache")
    assert [(e.line, "no version" in e.reason) for e in result.errors] == [(5, True)]
    assert found[("TF-001", "module.gpu")].status is Status.UNKNOWN
    assert not [k for k in found if k[0] == "EBS-001"]


def _tgz(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return buf.getvalue()


def test_a_registry_module_served_as_an_archive_with_a_subdir(
        tmp_path: Path, registry: tuple[str, Any]) -> None:
    host, handler = registry
    body = TEMPLATE.format(itype="g6.xlarge", encrypted="false").encode()
    handler.versions = ["0.9.0"]
    handler.files = {"/files/gpu-0.9.0.tar.gz": _tgz({"modules/gpu/main.tf": body})}
    handler.location = staticmethod(lambda v: f"/files/gpu-{v}.tar.gz")  # relative
    root = _root(tmp_path, f'module "gpu" {{\n  source  = "{host}/acme/gpu/aws//modules/gpu"\n'
                           '  version = "~> 0.9"\n}\n')
    result, found = _scan(root, tmp_path / "cache")
    assert result.errors == []
    assert _types(result) == {"module.gpu.aws_launch_template.this": "g6.xlarge"}
    assert found[("EBS-001", "module.gpu.aws_launch_template.this")].status is Status.FAIL


@pytest.mark.parametrize("members, links", [
    ({"../escape.tf": b"x"}, None),
    ({"/abs/escape.tf": b"x"}, None),
    ({"main.tf": b""}, {"evil": "../../../etc"}),
])
def test_an_archive_that_climbs_out_is_refused(
        tmp_path: Path, registry: tuple[str, Any], members: dict[str, bytes],
        links: dict[str, str] | None) -> None:
    host, handler = registry
    handler.versions = ["1.0.0"]
    handler.files = {"/files/m.tar.gz": _tgz(members, links)}
    handler.location = staticmethod(lambda v: f"http://{host}/files/m.tar.gz")
    root = _root(tmp_path, f'module "gpu" {{\n  source  = "{host}/acme/gpu/aws"\n'
                           '  version = "1.0.0"\n}\n')
    cache = tmp_path / "cache"
    result, found = _scan(root, cache)
    assert [(e.line, "refused" in e.reason) for e in result.errors] == [(5, True)]
    assert found[("TF-001", "module.gpu")].status is Status.UNKNOWN
    assert not (tmp_path / "escape.tf").exists() and not (cache / "escape.tf").exists()
    assert not (cache / "archive").exists() or not any((cache / "archive").iterdir())


def test_zip_slip_and_budgets_are_refused_before_writing(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("ok.tf", "x")
        z.writestr("../../slip.tf", "x")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(FetchError, match="out of it"):
        extract(buf.getvalue(), "zip", out)
    assert list(out.iterdir()) == []  # checked before anything was written
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("big.tf", b"\0" * (4 << 20))
    with pytest.raises(FetchError, match="more than 1 MiB"):
        extract(bomb.getvalue(), "zip", out, max_bytes=1 << 20)
    many = _tgz({f"f{i}.tf": b"" for i in range(30)})
    with pytest.raises(FetchError, match="more than 20 files"):
        extract(many, "tgz", out, max_files=20)
    assert list(out.iterdir()) == []


def test_a_git_tree_over_the_budget_is_not_checked_out(tmp_path: Path, repo: Path) -> None:
    fetcher = ModuleFetcher(tmp_path / "cache", max_files=1)
    with pytest.raises(FetchError, match="more than 1 files"):
        fetcher(f"git::file://{repo}?ref=v1.0.0", None)
    assert not (tmp_path / "cache" / "git").exists()


def test_a_fetched_module_cannot_reach_out_of_its_package(tmp_path: Path) -> None:
    """A local source inside a fetched package that climbs out of it (terraform: "Local
    module path escapes module package") is not read; the root is not judged as if whole."""
    outside = tmp_path / "secret-stack"
    outside.mkdir()
    (outside / "main.tf").write_text(TEMPLATE.format(itype="p5.48xlarge", encrypted="false"))
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    _git(hostile, "init", "-q", "-b", "main")
    _commit(hostile, {"main.tf": 'module "x" {\n  source = "../../../../secret-stack"\n}\n'},
            "v1")
    cache = tmp_path / "c" / "d"
    root = _root(tmp_path, f'module "h" {{\n  source = "git::file://{hostile}?ref=v1"\n}}\n')
    result, _ = _scan(root, cache)
    assert [r for r in result.resources if r.kind == "ec2.launch_template"] == []
    assert any("leads out of the fetched package" in e.reason for e in result.errors)
    assert result.gaps  # the root is not read whole: no verdict leans on what is missing


def test_a_version_that_is_not_a_literal_is_not_guessed(tmp_path: Path,
                                                        registry: tuple[str, Any]) -> None:
    host, handler = registry
    handler.versions = ["1.0.0"]
    root = _root(tmp_path, 'variable "v" {\n  default = "1.0.0"\n}\n\n'
                           f'module "gpu" {{\n  source  = "{host}/acme/gpu/aws"\n'
                           '  version = var.v\n}\n')
    _, found = _scan(root, tmp_path / "cache")
    call = found[("TF-001", "module.gpu")]
    assert call.status is Status.UNKNOWN and "not a literal" in call.message
    assert handler.seen == []  # nothing was fetched at a guessed version


@pytest.mark.parametrize(("ref", "itype"), [("?ref=main", "p5.48xlarge"), ("", "p5.48xlarge"),
                                            ("?ref=v1.0.0", "g5.xlarge")])
def test_branches_tags_and_head(tmp_path: Path, repo: Path, ref: str, itype: str) -> None:
    root = _root(tmp_path, f'module "gpu" {{\n  source = "git::file://{repo}{ref}"\n}}\n')
    result, _ = _scan(root, tmp_path / "cache")
    assert result.errors == []
    assert _types(result) == {"module.gpu.aws_launch_template.this": itype}


def test_a_ref_that_does_not_exist_is_not_replaced_by_another(tmp_path: Path,
                                                              repo: Path) -> None:
    root = _root(tmp_path, f'module "gpu" {{\n  source = "git::file://{repo}?ref=v9.9.9"\n}}\n')
    result, found = _scan(root, tmp_path / "cache")
    assert _types(result) == {}
    assert [e.line for e in result.errors] == [5]
    assert found[("TF-001", "module.gpu")].status is Status.UNKNOWN
