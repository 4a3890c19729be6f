"""The Lab page's plain helpers (hill/web/static/lab/: share.js, editor.js,
tune.js) under Node, Debian's nodejs: the fragment's codes against Python's
base64 and zlib, byte offsets to characters, bracket matching, repeat
counts, the battles that flip.  (The page itself: tests/test_web_lab.py.)
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

LAB = Path(__file__).parents[1] / "hill/web/static/lab"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs nodejs")

SCRIPT = """
const lab = process.argv[1];
const share = await import(lab + "/share.js");
const editor = await import(lab + "/editor.js");
const tune = await import(lab + "/tune.js");
const input = JSON.parse(process.argv[2]);
const out = {};
out.short = await share.encodeCode(input.short);
out.long = await share.encodeCode(input.long);
out.longBack = await share.decodeCode(out.long[0], out.long[1]);
out.shortBack = await share.decodeCode("code", input.shortB64);
out.zBack = await share.decodeCode("z", input.pythonZ);
out.fragment = share.readFragment(input.fragment);
out.left = await share.readSide(out.fragment, "left");
out.right = await share.readSide(out.fragment, "right");
out.written = share.writeFragment([["left", "a.b c"], ["empty", ""], ["vs", "hill"]]);
out.chars = input.offsets.map((o) => editor.charIndex(input.unicode, o));
out.matches = [...input.brackets].map((_, i) => editor.matching(input.brackets, i));
out.counts = tune.repeatCounts(input.program).map((c) => [c.start, c.end, c.value, c.line]);
out.changed = tune.withValue(input.program, tune.repeatCounts(input.program)[1], 77);
out.values = tune.values(3, 20, 4, 100);
out.capped = tune.values(0, 1000, 1, 5).length;
out.flips = tune.flips(["+0-", "+++"], ["+0+", "++-"], ["x", "y"]);
console.log(JSON.stringify(out));
"""


def run(**data: Any) -> dict[str, Any]:
    result = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT, str(LAB), json.dumps(data)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def test_the_helpers() -> None:
    long = "(>)*9([-]>)*21 é ☃ " * 200
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    python_z = b64(raw.compress(long.encode()) + raw.flush())
    unicode = "é☃(𝄞[-])"
    program = "(>)*8\n(-)*  12 (a{b}c)%-3 [+]*5"
    out = run(
        short="(>)*9([-]>)*21",
        shortB64="KD4pKjkoWy1dPikqMjE",
        long=long,
        pythonZ=python_z,
        fragment="#left-code=KD4pKjkoWy1dPikqMjE&right=ref.ais523_defend7&vs=hill&bad=%E0",
        unicode=unicode,
        offsets=[0, 2, 5, 6, 10, 11, 100],
        brackets="([{}])[",
        program=program,
    )
    # LAB.md's plain form, both ways, as Python's base64url reads it
    assert out["short"] == ["code", b64(b"(>)*9([-]>)*21")]
    assert out["shortBack"] == "(>)*9([-]>)*21"
    # a long program deflated (raw deflate, as zlib's wbits=-15), both ways
    kind, text = out["long"]
    deflated = base64.urlsafe_b64decode(text + "==")
    assert kind == "z" and zlib.decompress(deflated, -15).decode() == long
    assert out["longBack"] == long and out["zBack"] == long
    assert out["left"] == {"kind": "code", "code": "(>)*9([-]>)*21"}
    assert out["right"] == {"kind": "hill", "name": "ref.ais523_defend7", "event": ""}
    assert out["fragment"]["vs"] == "hill" and out["fragment"]["bad"] == "%E0"
    assert out["written"] == "left=a.b%20c&vs=hill"
    # UTF-8 byte offsets to character indices (é: 2 bytes, ☃: 3, 𝄞: 4 and 2 UTF-16 units)
    encoded = unicode.encode()
    expected = [len(encoded[:o].decode("utf-8", "ignore").encode("utf-16-le")) // 2 for o in
                [0, 2, 5, 6, 10, 11, 100]]  # fmt: skip
    assert out["chars"] == expected == [0, 1, 2, 3, 5, 6, 9]
    assert out["matches"] == [5, 4, 3, 2, 1, 0, -1]
    # repeat counts: (start, end, value, line), then one changed
    assert out["counts"] == [[4, 5, 8, 1], [12, 14, 12, 2], [23, 25, -3, 2]]  # not ']*5'
    assert program[12:14] == "12" and program[23:25] == "-3"
    assert out["changed"] == "(>)*8\n(-)*  77 (a{b}c)%-3 [+]*5"
    assert out["values"] == [3, 7, 11, 15, 19] and out["capped"] == 5
    assert out["flips"] == [
        {"opponent": "x", "battle": 2, "from": "-", "to": "+"},
        {"opponent": "y", "battle": 2, "from": "+", "to": "-"},
    ]
