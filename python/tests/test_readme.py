"""The README's Python example runs as written (from a scratch directory)."""

import os
import re


def readme_example(repo: str) -> str:
    text = open(os.path.join(repo, "README.md"), encoding="utf-8").read()
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the README's Python section has one example"
    return blocks[0]


def test_readme_example_runs(repo, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_example(repo), "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "pass 0.5"
    assert "'u'" in out[1] and "'w'" in out[1]
    assert len(eval(out[2])) == 3
    assert (tmp_path / "optmech.json").exists()
    assert out[3].startswith("[[41.") and out[3].endswith(" 2.0")  # the planar Laplace: expected error 2 km
    assert out[4] == "pass" and (tmp_path / "city.npy").exists()
