"""Every hook is documented with its exact signature, and every docs example runs."""

import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.servers import azurite_binary

from litdata.core.registry import hookspecs

ROOT = Path(__file__).resolve().parents[1]
HOOKS = [name for name in dir(hookspecs) if name.startswith("litdata_")]


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented_with_its_signature(name):
    text = (ROOT / "docs" / "plugins" / "hooks.md").read_text()
    signature = f"{name}{inspect.signature(getattr(hookspecs, name))}"
    assert signature.replace("'", "") in text.replace("'", ""), signature


@pytest.mark.parametrize("name", HOOKS)
def test_hook_has_a_test(name):
    tests = "\n".join(path.read_text() for path in (ROOT / "tests").rglob("test_*.py"))
    assert f"def test_hook_{name}(" in tests


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _local_hub(request, root):
    """A local Hub serving ``my-org/reviews`` (3 Parquet files of 100 rows); its address."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from support.servers import start_hub

    folder = root / "my-org" / "reviews" / "data"
    folder.mkdir(parents=True)
    for part in range(3):
        rows = [{"id": part * 100 + i, "text": f"review {i}", "stars": i % 5} for i in range(100)]
        pq.write_table(pa.Table.from_pylist(rows), folder / f"train-{part:05d}-of-00003.parquet")
    server, endpoint = start_hub(root, root / "hub.log")
    request.addfinalizer(server.stop)
    return endpoint


@pytest.fixture
def environment(request, page, tmp_path_factory):
    """The environment a page's examples run in: remote.md talks to the session's S3, GCS and
    (when azurite is installed) Azure servers, huggingface.md to a local Hub.

    mds.md reads a dataset the real MDSWriter wrote (its writing example is not run: Mosaic is
    not installed here), copied where the page expects it.
    """
    env = dict(os.environ)
    if page.name == "huggingface.md":
        env["HF_ENDPOINT"] = _local_hub(request, tmp_path_factory.mktemp("hub"))
    if page.name == "mds.md":
        fixture = ROOT / "tests" / "data" / "mds-0.13.0" / "simple"
        shutil.copytree(fixture, request.getfixturevalue("tmp_path") / "my-mds-dataset")
    if page.name == "remote.md":  # the page creates its buckets, as a reader does
        env.update(
            AWS_ENDPOINT_URL=request.getfixturevalue("s3_server").endpoint,
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            AWS_DEFAULT_REGION="us-east-1",
            STORAGE_EMULATOR_HOST=request.getfixturevalue("gcs_server").endpoint,
        )
        if azurite_binary() is not None:  # else the page's Azure example does nothing
            store = request.getfixturevalue("azurite_server")
            env["AZURE_STORAGE_CONNECTION_STRING"] = store.storage_options["connection_string"]
    return env


#: Names every page's run leaves in its folder besides its own: the saved examples.
_RUNNER_FILES = re.compile(r"^(example_\d+\.py|__pycache__)$")


def _run_blocks(page, folder, environment):
    """Run a page's Python and shell examples in order in ``folder``, as a reader would."""
    blocks = re.findall(r"```(python|shell)\n(.*?)```", page.read_text(), re.S)
    for number, (language, block) in enumerate(blocks):
        if language == "shell":
            command = ["bash", "-euo", "pipefail", "-c", block]
        else:
            script = folder / f"example_{number}.py"
            script.write_text(block)
            command = [sys.executable, script.name]
        subprocess.run(command, cwd=folder, env=environment, check=True, timeout=180)


def _claim_names(page, names, root):
    """Record the names ``page``'s examples leave; fail if another page's run left one.

    Each page records its names before it reads the others', so of two pages that clash,
    whichever runs second (in this process or another xdist worker) sees it.
    """
    claims = root / "docs-example-names"
    claims.mkdir(exist_ok=True)
    key = str(page.relative_to(ROOT)).replace(os.sep, "__")
    (claims / f"{key}.txt").write_text("\n".join(sorted(names)))
    for other in claims.glob("*.txt"):
        if other.name == f"{key}.txt":
            continue
        shared = names & set(other.read_text().split("\n")) - {""}
        assert not shared, (
            f"{key.replace('__', '/')} and {other.stem.replace('__', '/')} both write "
            f"{sorted(shared)}: "
            f"run in one folder, one page's examples would clobber the other's"
        )


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_docs_examples_run(page, tmp_path, tmp_path_factory, environment):
    """A page's Python and shell examples run in order in one directory, twice, as a reader
    would run them and then run them again; and no two pages write the same names.

    Each block is saved as a file and run, so an example can be a module that workers import
    (``if __name__ == "__main__":``) or a test file that runs pytest on itself.
    """
    # ``shell`` blocks are commands a reader types (``litdata inspect ...``): they run with
    # this interpreter's ``litdata`` first on PATH, and must succeed.
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    before = set(os.listdir(tmp_path))  # what the environment put there (mds.md's dataset)
    for _ in range(2):
        _run_blocks(page, tmp_path, environment)
    names = {name for name in os.listdir(tmp_path) if not _RUNNER_FILES.match(name)} - before
    session = tmp_path_factory.getbasetemp()  # xdist: one folder per worker in the session's
    _claim_names(page, names, session.parent if session.name.startswith("popen-") else session)


def test_readme_examples_pass_mypy_strict(tmp_path):
    """The README's examples type-check as a user's strict project would check them."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    for number, block in enumerate(blocks):
        (tmp_path / f"example_{number}.py").write_text(block)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
