"""The real ``litdata`` command as a user runs it: Ctrl-C, a broken module, usage, the cache."""

import os
import shutil
import signal
import subprocess
import textwrap

import numpy as np
import pytest
from support.cli_process import cli_argv, cli_env, litdata
from support.helpers import leaving_no_process, session_processes, wait_for

import litdata as ld
from litdata import cli


def _interrupt(argv, cwd, ready):
    """Start ``litdata ARGV``, wait for ``ready(process)``, press Ctrl-C (SIGINT to its group)."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    with leaving_no_process(process):
        wait_for(lambda: ready(process), timeout=120, what="the command to be at work")
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
        wait_for(lambda: not session_processes(process.pid), timeout=10, what="no process left")
    return process.returncode, out, err


def test_ctrl_c_stops_optimize_in_one_line(tmp_path):
    (tmp_path / "slow.py").write_text(
        textwrap.dedent(
            """
            import pathlib, time

            def to_sample(name):
                pathlib.Path(f"started-{name}").touch()
                time.sleep(60)
                return {"name": name}
            """
        )
    )
    argv = cli_argv("optimize", "slow.py:to_sample", "--inputs", "a", "b", "--output", "out")
    code, _, err = _interrupt(
        [*argv, "--num-workers", "2"], tmp_path, lambda _: any(tmp_path.glob("started-*"))
    )
    assert code == 130
    assert "Traceback" not in err
    assert "interrupted (Ctrl-C): the command stopped." in err
    assert not (tmp_path / "out").exists()  # the failed run's empty folder is gone too


def test_ctrl_c_stops_bench_and_its_workers_in_one_line(tmp_path):
    ld.write_dataset(({"x": np.zeros(256)} for _ in range(2000)), tmp_path / "ds", chunk_size=100)
    argv = cli_argv("bench", tmp_path / "ds", "--workers", "2", "--seconds", "60")
    # At work once the command's two DataLoader workers run.
    code, out, err = _interrupt(argv, tmp_path, lambda p: len(session_processes(p.pid)) > 2)
    assert code == 130
    assert "Traceback" not in err + out
    assert err.strip().splitlines() == ["interrupted (Ctrl-C): the command stopped."]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def to_sample(name)\n    return 1\n", "cannot import broken: SyntaxError: expected ':'"),
        ("import no_such_module_here\n", "ModuleNotFoundError: No module named"),
        ("x = 1\ny = 1 / 0\n", "ZeroDivisionError: division by zero ("),
    ],
    ids=["syntax", "import", "raises"],
)
def test_a_broken_module_is_one_error_line(tmp_path, source, expected):
    (tmp_path / "broken.py").write_text(source)
    result = litdata(
        "optimize", "broken.py:to_sample", "--inputs", "a", "--output", "out", cwd=tmp_path
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: 'broken.py:to_sample': ")
    assert expected in result.stderr
    assert "broken.py, line" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_errors_speak_in_flags_not_python_arguments(tmp_path):
    (tmp_path / "prep.py").write_text("def to_sample(name):\n    return {'name': name}\n")
    write = ("optimize", "prep.py:to_sample", "--inputs", "a", "--output", "out")
    assert litdata(*write, "--num-workers", "1", cwd=tmp_path).returncode == 0
    again = litdata(*write, "--num-workers", "1", cwd=tmp_path)
    assert again.returncode == 1
    assert "HINT: If you want to append/overwrite to the existing dataset" in again.stderr
    assert "use --mode append" in again.stderr
    assert "--mode overwrite" in again.stderr
    assert "mode='" not in again.stderr


def test_plugins_lists_the_hooks_kind_it_shows():
    result = litdata("plugins", "--kind", "hooks")
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()[1:]
    assert rows
    assert all(row.startswith("hooks ") for row in rows)
    assert any(" builtin " in row for row in rows)


def test_inspect_refuses_a_negative_sample_count(tmp_path):
    ld.write_dataset(({"i": i} for i in range(3)), tmp_path / "ds", chunk_size=2)
    result = litdata("inspect", tmp_path / "ds", "--samples", "-1")
    assert result.returncode == 2
    assert "argument --samples: '-1' is not a count" in result.stderr


def test_ctrl_c_in_bench_keeps_the_rows_already_measured(tmp_path):
    ld.write_dataset(({"x": np.zeros(256)} for _ in range(2000)), tmp_path / "ds", chunk_size=100)
    argv = cli_argv("bench", tmp_path / "ds", "--workers", "0,2", "--seconds", "4")
    # The 0-worker row is measured once the 2-worker run's DataLoader workers exist.
    code, out, err = _interrupt(argv, tmp_path, lambda p: len(session_processes(p.pid)) > 2)
    assert code == 130
    lines = out.splitlines()
    assert lines[0].startswith(f"Streaming {tmp_path / 'ds'} with 2 worker count(s), about 4 s")
    assert lines[2].split()[0] == "0"  # the row measured before Ctrl-C
    assert "(interrupted: 1 of 2 worker counts measured)" in out
    assert "num_workers=0 reaches" in out
    assert err.strip().splitlines() == ["interrupted (Ctrl-C): the command stopped."]


def test_bench_help_says_its_defaults():
    result = litdata("bench", "--help")
    assert "(default: 10)" in result.stdout
    assert "(default: 64)" in result.stdout


def test_bench_on_a_missing_path_prints_only_the_error(tmp_path):
    result = litdata("bench", tmp_path / "nothing", "--workers", "0", "--seconds", "0.1")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: The provided dataset path `")


@pytest.fixture
def cached(tmp_path):
    """A cache holding the chunks of two compressed datasets; the cache root and the datasets."""
    cache = tmp_path / "cache"
    names = []
    for name in ("cats", "dogs"):
        samples = ({"x": np.full(500, i)} for i in range(40))
        ld.write_dataset(samples, tmp_path / name, chunk_size=10, compression="zstd")
        assert len(list(ld.StreamingDataset(str(tmp_path / name), cache_dir=str(cache)))) == 40
        names.append(str(tmp_path / name))
    return cache, names


def test_cache_du_says_which_dataset_each_folder_holds(cached):
    cache, names = cached
    result = litdata("cache", "du", "--cache-dir", cache)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name in names:
        (line,) = [line for line in lines if f"  {name}  (" in line]
        assert "4 chunks" in line
        assert " KB " in line
    assert "0.0 MB" not in result.stdout
    assert lines[-1].endswith(f"total in {cache}")


def test_cache_du_shows_the_largest_and_prune_drops_datasets_that_are_gone(cached):
    cache, names = cached
    top = litdata("cache", "du", "--cache-dir", cache, "--top", "1")
    assert top.returncode == 0, top.stderr
    lines = top.stdout.splitlines()
    assert len(lines) == 3  # one dataset, the rest summed, the total
    assert "in 1 more (--top 0 lists all)" in lines[1]
    shutil.rmtree(names[0])  # the first dataset is deleted; its cache stays
    listed = litdata("cache", "du", "--cache-dir", cache).stdout
    assert "(gone: `litdata cache prune` removes it)" in listed
    pruned = litdata("cache", "prune", "--cache-dir", cache)
    assert pruned.returncode == 0, pruned.stderr
    assert f"{names[0]} is gone" in pruned.stdout
    assert "Pruned 1 cached dataset (" in pruned.stdout
    remaining = litdata("cache", "du", "--cache-dir", cache).stdout
    assert names[0] not in remaining
    assert f"  {names[1]}  (" in remaining


def test_cache_clear_of_everything_asks_first(cached):
    cache, names = cached
    for answer in ("", "n\n"):
        refused = litdata("cache", "clear", "--cache-dir", cache, stdin=answer)
        assert refused.returncode == 0  # declining is an answer, not an error
        assert "[y/N]" in refused.stdout
        assert "Nothing removed" in refused.stdout
        assert "pass --yes" in refused.stdout
        assert refused.stderr == ""
        assert len(list(cache.iterdir())) == 2
    one = litdata("cache", "clear", names[0], "--cache-dir", cache)  # one dataset: no question
    assert one.returncode == 0
    assert "[y/N]" not in one.stdout
    assert len(list(cache.iterdir())) == 1
    assert litdata("cache", "clear", "--cache-dir", cache, stdin="y\n").returncode == 0
    assert list(cache.iterdir()) == []
    names_again = litdata("cache", "clear", "--cache-dir", cache, "--yes")
    assert names_again.returncode == 0


def _worker_died_after_ctrl_c(argv):
    """What torch's SIGCHLD handler does when Ctrl-C killed a worker first."""
    try:
        signal.raise_signal(signal.SIGINT)
    except KeyboardInterrupt:
        raise RuntimeError("DataLoader worker (pid 1) exited unexpectedly") from None


def test_an_error_that_replaces_ctrl_c_is_reported_as_the_interruption(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_run", _worker_died_after_ctrl_c)
    assert cli.main([]) == cli.INTERRUPTED
    assert capsys.readouterr().err.strip() == "interrupted (Ctrl-C): the command stopped."
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler put back


def test_an_error_without_ctrl_c_is_not_taken_for_one(monkeypatch):
    def failing(argv):
        raise RuntimeError("a real failure")

    monkeypatch.setattr(cli, "_run", failing)
    with pytest.raises(RuntimeError, match="a real failure"):
        cli.main([])
