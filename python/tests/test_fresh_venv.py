"""`pip install` of the built wheel into a fresh virtual environment, then the README's
Python example, exactly as a user would run them. Needs the wheel's path in
METRICDP_WHEEL (set by .ci/run) and network access to PyPI for numpy and dask."""

import os
import re
import subprocess
import sys
import venv

import pytest
from test_readme import readme_example

WHEEL = os.environ.get("METRICDP_WHEEL")


@pytest.mark.skipif(not WHEEL, reason="METRICDP_WHEEL (the built wheel) not given")
def test_wheel_installs_and_runs_the_readme_example(repo, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # The wheel with the extras the README's install line names (its example also runs the
    # distributed audit), so that line stays true.
    readme = open(os.path.join(repo, "README.md"), encoding="utf-8").read()
    extras = re.search(r"metricdp-\*\.whl\)\[([a-z,]+)\]", readme)
    assert extras and "distributed" in extras.group(1).split(","), "the README's install line names its extras"
    subprocess.run([py, "-m", "pip", "install", "--quiet", f"{WHEEL}[{extras.group(1)}]"], check=True, timeout=600)
    example = tmp_path / "example.py"
    example.write_text(readme_example(repo))
    run = subprocess.run([py, example], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "pass 0.5"
    where = subprocess.run([py, "-c", "import metricdp; print(metricdp.__file__)"],
                           capture_output=True, text=True, check=True).stdout
    assert str(env_dir) in where, where
    assert sys.executable != str(py)
