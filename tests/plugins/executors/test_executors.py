"""The built-in executor passes the executor contract, with each start method."""

import pytest

from litdata.plugins.executors.local import LocalExecutor
from litdata.testing import ExecutorContract


class TestLocalExecutor(ExecutorContract):
    @pytest.fixture(params=["fork", "spawn"])
    def executor(self, request):
        return LocalExecutor(start_method=request.param)


def test_the_local_executor_refuses_num_nodes_and_foreign_options(tmp_path):
    from support import fns

    import litdata as ld

    with pytest.raises(ValueError, match=r"num_nodes=2: the 'local' executor runs on this"):
        ld.optimize(fns.record, range(10), tmp_path, chunk_size=4, num_nodes=2)
    with pytest.raises(ValueError, match=r"does not take address"):
        ld.optimize(fns.record, range(10), tmp_path, chunk_size=4, executor_options={"address": 1})
