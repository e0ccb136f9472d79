"""The built-in executor passes the executor contract, with each start method."""

import pytest

from litdata.plugins.executors.local import LocalExecutor
from litdata.testing import ExecutorContract


class TestLocalExecutor(ExecutorContract):
    @pytest.fixture(params=["fork", "spawn"])
    def executor(self, request):
        return LocalExecutor(start_method=request.param)
