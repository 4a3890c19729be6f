"""The described API (issue 33.5): /api/openapi.json, served by a real
`bfjoust web` on a real hill (support.apihill: programs, two tournaments, a
played and an open contest, a `-test` trial), is valid OpenAPI (checked by
openapi-spec-validator), names every JSON twin, and schemathesis fuzzes the
process with it: no 5xx, every answer's status, content type and body as
described.  The fuzzer is bounded (EXAMPLES per operation) and seeded."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate
from support.apihill import ApiHill, build
from support.webhill import WebProcess, get

from hill.web.urls import PATHS

EXAMPLES = 40  # per operation and phase
SEED = 33
CHECKS = (
    "not_a_server_error,response_schema_conformance,"
    "status_code_conformance,content_type_conformance"
)
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
BATTLES = 42


@dataclass
class Site:
    api: ApiHill
    web: WebProcess
    folder: Path

    @property
    def url(self) -> str:
        return self.web.url


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("apihill")
    api = build(folder / "var")
    web = WebProcess(folder)
    yield Site(api, web, folder)
    assert web.stop() == 0, web.log()
    api.hill.close()


def described(site: Site) -> dict[str, Any]:
    reply = get(f"{site.url}/api/openapi.json")
    assert reply.status == 200 and reply.headers["Content-Type"].startswith("application/json")
    return reply.json()


def test_the_description_is_valid_openapi_and_names_every_json_twin(site: Site) -> None:
    document = described(site)
    validate(document)  # raises on an invalid document
    twins = {name for name in PATHS if name.endswith("-json")} - {"openapi-json"}
    operations = {
        op["operationId"]: method
        for item in document["paths"].values()
        for method, op in item.items()
    }
    assert set(operations) == twins | {"lab-rank"}
    assert operations["lab-rank"] == "post"
    assert all(method == "get" for name, method in operations.items() if name != "lab-rank")
    standings = document["paths"]["/api/standings"]["get"]
    assert [p["name"] for p in standings["parameters"]] == ["event"]
    assert {"200", "404", "503"} <= set(standings["responses"])
    pair = document["paths"]["/api/breakdown/{name}/{other}"]["get"]
    assert [p["name"] for p in pair["parameters"] if p["in"] == "path"] == ["name", "other"]


def test_the_description_fails_an_answer_that_does_not_match(site: Site) -> None:
    """The fuzzer's checks are live: with the standings' size described as a
    string, the same run fails."""
    document = described(site)
    wrong = {"/api/standings": copy.deepcopy(document["paths"]["/api/standings"])}
    schema = wrong["/api/standings"]["get"]["responses"]["200"]["content"]["application/json"]
    schema["schema"]["properties"]["size"] = {"type": "string"}
    done = fuzz(site, {**document, "paths": wrong}, examples=5)
    assert done.returncode != 0
    assert "Response violates schema" in done.stdout and "/properties/size" in done.stdout


def test_the_fuzzer_finds_no_server_error_and_every_answer_as_described(site: Site) -> None:
    done = fuzz(site, with_hill_values(site, described(site)), examples=EXAMPLES)
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:] + site.web.log()
    operations = sum(len(item) for item in described(site)["paths"].values())
    assert f"Tested: {operations}" in done.stdout  # every operation was fuzzed


def fuzz(site: Site, document: dict[str, Any], examples: int) -> subprocess.CompletedProcess:
    """schemathesis run against the process with `document` (seeded, bounded).
    One worker: Python 3.11 builds ASTs with a recursion count shared by
    threads, and schemathesis' coverage phase on two threads now and then
    died of "AST constructor recursion depth mismatch" (a SystemError)."""
    path = site.folder / "openapi-fuzzed.json"
    path.write_text(json.dumps(document))
    return subprocess.run(
        [str(SCHEMATHESIS), "run", str(path), "--url", site.url, "--checks", CHECKS,
         "--max-examples", str(examples), "--seed", str(SEED), "--workers", "1",
         "--phases", "examples,coverage,fuzzing", "--no-color",
         "--request-timeout", "60", "--suppress-health-check", "too_slow"],
        capture_output=True, text=True, timeout=900, cwd=site.folder,
    )  # fmt: skip


def with_hill_values(site: Site, document: dict[str, Any]) -> dict[str, Any]:
    """The description with this hill's real names, ids and tokens offered
    beside any string (path parameters), and Lab rankings with rows of the
    right shape beside any body: the fuzzer then reaches the views' work, not
    only their 404s and 400s (code hashes: programs on or off the hill)."""
    document = copy.deepcopy(document)
    standings = get(f"{site.url}/api/standings").json()
    names = [p["full_name"] for p in standings["programs"]]
    hashes = [p["hash"] for p in get(f"{site.url}/api/lab/state").json()["programs"]]
    history = get(f"{site.url}/api/history").json()["changes"]
    tournaments = [str(t["id"]) for t in get(f"{site.url}/api/tournaments").json()["tournaments"]]
    real = {
        "name": [*names, "erin.probe", "nobody.here"],
        "other": names,
        "id": tournaments,
        "round": ["1", "2", "3"],
        "sha": [c["commit"] for c in history if c["commit"]],
        "token": [site.api.trial],
    }
    for path, item in document["paths"].items():
        for op in item.values():
            for parameter in op["parameters"]:
                if parameter["in"] == "path":
                    values = real[parameter["name"]]
                    if path.startswith("/api/contest/"):
                        values = list(site.api.contests)
                    parameter["schema"] = {"anyOf": [{"enum": values}, parameter["schema"]]}
                elif parameter["name"] in ("left_code", "right_code"):
                    parameter["schema"] = {"anyOf": [{"enum": hashes}, parameter["schema"]]}
                elif parameter["name"] == "event":
                    parameter["schema"] = {"type": "integer", "minimum": 0, "maximum": 12}
    # rankings against the latest state, whose size the rows fit
    rank = document["paths"]["/api/lab/rank"]["post"]
    rank["parameters"][0]["schema"] = {"enum": [standings["event"]["id"]]}
    body = rank["requestBody"]["content"]
    row = {"type": "string", "pattern": f"^[-+0]{{{BATTLES}}}$"}
    n = len(names)
    runs = {
        "type": "array",
        "minItems": 1,
        "maxItems": 3,
        "items": {"type": "array", "minItems": n, "maxItems": n, "items": row},
    }
    shaped = {
        "type": "object",
        "properties": {"name": {"enum": ["lab.probe", "erin.x"]}, "runs": runs},
        "required": ["runs"],
        "additionalProperties": False,
    }
    body["application/json"]["schema"] = {"anyOf": [shaped, body["application/json"]["schema"]]}
    return document
