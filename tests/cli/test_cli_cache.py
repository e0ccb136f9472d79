"""``litdata cache path`` and ``litdata cache clear``."""

import uuid

import litdata as ld
from litdata.cli import main


def test_cache_path_and_clear(tmp_path, capsys):
    url = f"memory://cli-{uuid.uuid4().hex[:8]}/ds"
    ld.write_dataset(({"id": i} for i in range(20)), url, chunk_size=5)
    cache = tmp_path / "cache"
    assert sum(1 for _ in ld.StreamingDataset(url, cache_dir=str(cache))) == 20
    assert main(["cache", "path", "--cache-dir", str(cache)]) == 0
    assert capsys.readouterr().out.strip() == str(cache)
    assert main(["cache", "path", url, "--cache-dir", str(cache)]) == 0
    home = capsys.readouterr().out.strip()
    assert home.startswith(str(cache))
    assert any(path.name.startswith("chunk-") for path in (tmp_path / "cache").rglob("*"))
    assert main(["cache", "clear", url, "--cache-dir", str(cache)]) == 0
    assert "Removed" in capsys.readouterr().out
    assert not list((tmp_path / "cache").rglob("chunk-*"))
    assert main(["cache", "clear", "--cache-dir", str(cache), "--yes"]) == 0
    assert cache.is_dir()
    assert list(cache.iterdir()) == []
