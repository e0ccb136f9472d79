"""``list_media_folder`` and ``iter_webdataset_tar`` on real folders and tar files."""

import io
import tarfile

import pytest

import litdata as ld


def _touch(path, data=b"x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def test_media_folder_labels_are_parent_folders(tmp_path):
    wanted = [
        _touch(tmp_path / "dog" / "b.JPG"),
        _touch(tmp_path / "cat" / "a.png"),
        _touch(tmp_path / "top.webp"),
        _touch(tmp_path / "cat" / "young" / "c.jpeg"),
    ]
    _touch(tmp_path / "cat" / "notes.txt")
    listed = ld.list_media_folder(tmp_path, kind="image")
    assert [entry["path"] for entry in listed] == sorted(wanted)
    labels = {entry["path"]: entry["label"] for entry in listed}
    assert labels[wanted[0]] == "dog"
    assert labels[wanted[2]] is None
    assert labels[wanted[3]] == "young"
    assert all(e["label"] is None for e in ld.list_media_folder(tmp_path, drop_labels=True))


@pytest.mark.parametrize(
    ("kind", "name"),
    [("text", "a.md"), ("audio", "a.flac"), ("video", "a.mkv"), ("nifti", "brain.nii.gz")],
)
def test_media_kinds(tmp_path, kind, name):
    path = _touch(tmp_path / "x" / name)
    _touch(tmp_path / "x" / "other.bin")
    assert ld.list_media_folder(tmp_path, kind=kind) == [{"path": path, "label": "x"}]


def test_unknown_media_kind_and_missing_root(tmp_path):
    with pytest.raises(ValueError, match="Unknown media kind 'images'"):
        ld.list_media_folder(tmp_path, kind="images")
    with pytest.raises(FileNotFoundError, match="nope"):
        ld.list_media_folder(tmp_path / "nope")


def _tar(path, members):
    with tarfile.open(path, "w") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
                continue
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_webdataset_members_group_by_key(tmp_path):
    tar = _tar(
        tmp_path / "shard.tar",
        [
            ("d", None),
            ("d/0001.jpg", b"img1"),
            ("d/0001.cls", b"3"),
            ("d/0001.seg.png", b"mask1"),
            ("README", b"no suffix"),
            ("d/0002.jpg", b"img2"),
        ],
    )
    samples = list(ld.iter_webdataset_tar(tar))
    assert samples == [
        {
            "__key__": "d/0001",
            "__url__": str(tar),
            "jpg": b"img1",
            "cls": b"3",
            "seg.png": b"mask1",
        },
        {"__key__": "d/0002", "__url__": str(tar), "jpg": b"img2"},
    ]


def test_a_truncated_tar_is_named(tmp_path):
    tar = _tar(tmp_path / "shard.tar", [(f"{i:04d}.bin", bytes(4000)) for i in range(5)])
    tar.write_bytes(tar.read_bytes()[:9000])
    with pytest.raises(ValueError, match="shard.tar"):
        list(ld.iter_webdataset_tar(tar))
    with pytest.raises(FileNotFoundError):
        list(ld.iter_webdataset_tar(tmp_path / "missing.tar"))
