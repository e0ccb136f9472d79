"""NUMA plans from sysfs (the machine's, and small sysfs-like trees), and binding for real."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import litdata as ld
from litdata.streaming.workers.affinity import NODE_ROOT, NumaAffinity, parse_cpu_list


def _tree(tmp_path: Path, nodes: dict[int, str]) -> Path:
    for node, cpulist in nodes.items():
        folder = tmp_path / f"node{node}"
        folder.mkdir(parents=True)
        (folder / "cpulist").write_text(cpulist + "\n")
    (tmp_path / "online").write_text("0\n")  # files that are not nodes are ignored
    return tmp_path


@pytest.mark.parametrize(
    ("text", "cpus"),
    [("0-3", (0, 1, 2, 3)), ("0,2-3,8", (0, 2, 3, 8)), ("5\n", (5,)), ("", ())],
)
def test_cpu_lists_parse(text, cpus):
    assert parse_cpu_list(text) == cpus


def test_a_node_of_this_machine_gives_its_allowed_cpus():
    node = 0 if not NODE_ROOT.is_dir() else int(next(NODE_ROOT.glob("node[0-9]*")).name[4:])
    plan = ld.get_numa_affinity(node)
    assert plan.numa_node == node
    assert plan.cpus
    assert set(plan.cpus) <= os.sched_getaffinity(0)
    assert plan.bind_memory


def test_a_node_keeps_only_the_cpus_this_process_may_use(tmp_path):
    allowed = sorted(os.sched_getaffinity(0))
    root = _tree(tmp_path, {0: f"{allowed[0]},4000-4003", 1: "5000-5003"})
    assert ld.get_numa_affinity(0, root=root).cpus == (allowed[0],)
    with pytest.raises(ValueError, match=r"NUMA node 1 has CPUs \[5000, 5001"):
        ld.get_numa_affinity(1, root=root)
    with pytest.raises(ValueError, match=r"no NUMA node 7 here; the nodes are \[0, 1\]"):
        ld.get_numa_affinity(7, root=root)


def test_without_numa_information_node_0_is_every_allowed_cpu(tmp_path):
    plan = ld.get_numa_affinity(0, bind_memory=False, root=tmp_path / "absent")
    assert plan == NumaAffinity(0, tuple(sorted(os.sched_getaffinity(0))), False)
    with pytest.raises(ValueError, match="no NUMA node 1"):
        ld.get_numa_affinity(1, root=tmp_path / "absent")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the answer without a GPU")
def test_without_a_gpu_there_is_no_gpu_plan():
    assert ld.get_gpu_affinity() is None
    assert ld.get_gpu_affinity("cuda:0") is None


def test_plans_pickle():
    plan = NumaAffinity(0, (0,), bind_memory=False)
    assert pickle.loads(pickle.dumps(plan)) == plan


_BIND = textwrap.dedent(
    """
    import os, sys
    import torch
    from torch.utils.data import DataLoader
    import litdata as ld

    plan = ld.get_numa_affinity(int(sys.argv[1]))
    plan = type(plan)(plan.numa_node, plan.cpus[:1], plan.bind_memory)
    plan.bind()
    print("rank", sorted(os.sched_getaffinity(0)))


    class Cpus(torch.utils.data.Dataset):
        def __len__(self):
            return 1

        def __getitem__(self, index):
            return sorted(os.sched_getaffinity(0))


    os.sched_setaffinity(0, range(os.cpu_count()))  # forget it: the worker must bind itself
    loader = DataLoader(Cpus(), num_workers=1, worker_init_fn=plan, collate_fn=lambda b: b[0])
    print("worker", next(iter(loader)))
    """
)


def test_binding_holds_in_the_rank_and_in_workers():
    node = 0 if not NODE_ROOT.is_dir() else int(next(NODE_ROOT.glob("node[0-9]*")).name[4:])
    first = ld.get_numa_affinity(node).cpus[0]
    result = subprocess.run(
        [sys.executable, "-c", _BIND, str(node)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == [f"rank [{first}]", f"worker [{first}]"]


def test_cpus_outside_the_allowed_set_are_refused_with_the_node_named():
    plan = NumaAffinity(3, (100_000,), bind_memory=False)
    with pytest.raises(OSError, match=r"CPUs \[100000\] of NUMA node 3"):
        plan.bind()
