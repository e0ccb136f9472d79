"""The media serializers (audio, video, pdf, nifti, mesh, tiff, jpeg_array, graph) pass the
serializer contract with their real libraries, and record LitData's ``data_format`` names."""

from __future__ import annotations

import io
import tempfile
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from media_samples import pdf_bytes

from litdata.engine.items.wrappers import Audio, Graph, Mesh, Nifti, Pdf, Text, Tiff, Video
from litdata.engine.reader import DatasetReader
from litdata.plugins.serializers.audio import AudioSerializer, DecodedAudio, encode_wav
from litdata.plugins.serializers.graph import GraphSerializer
from litdata.plugins.serializers.mesh import MeshSerializer
from litdata.plugins.serializers.nifti import NiftiSerializer
from litdata.plugins.serializers.pdf import PdfSerializer
from litdata.plugins.serializers.tiff import TifffileSerializer, TiffSerializer
from litdata.plugins.serializers.video import VideoSerializer
from litdata.processing.write import write_dataset
from litdata.testing import SerializerContract

nibabel = pytest.importorskip("nibabel")
trimesh = pytest.importorskip("trimesh")
pypdf = pytest.importorskip("pypdf")
tifffile = pytest.importorskip("tifffile")
pyg_data = pytest.importorskip("torch_geometric.data")

MEDIA = Path(tempfile.mkdtemp(prefix="litdata-media-kinds-"))
WAVE = (np.sin(np.arange(400) / 7.0) * 0.8).astype(np.float32)
STEREO = np.stack([WAVE, -WAVE])


def _quantized(array: np.ndarray) -> np.ndarray:
    """What 16-bit WAV keeps of float samples."""
    return (np.round(np.clip(array, -1, 1) * 32767) / 32768).astype(np.float32)


def _wav_file() -> Path:
    path = MEDIA / "tone.wav"
    path.write_bytes(encode_wav(STEREO, 16000))
    return path


class TestAudio(SerializerContract):
    serializer_class = AudioSerializer
    samples = [
        Audio(array=WAVE, sampling_rate=8000),
        Audio(array=torch.from_numpy(STEREO), sampling_rate=22050),
        Audio(path=_wav_file()),
        str(_wav_file()),
    ]
    expected = [
        (_quantized(WAVE), 8000),
        (_quantized(STEREO), 22050),
        (_quantized(STEREO), 16000),
        (_quantized(STEREO), 16000),
    ]
    bad_inputs = [Audio(array=WAVE), Audio(array=np.zeros((1, 2, 3)), sampling_rate=8), 3]

    def comparable(self, value: Any) -> Any:
        return value["array"], value["sampling_rate"]


def test_audio_is_stored_as_16_bit_wav_named_audio_wav() -> None:
    data, name = AudioSerializer().serialize(Audio(array=WAVE, sampling_rate=8000))
    assert name == "audio:wav"
    with wave.open(io.BytesIO(data)) as reader:
        assert (reader.getsampwidth(), reader.getnchannels(), reader.getframerate()) == (2, 1, 8000)
        assert reader.getnframes() == len(WAVE)


def test_audio_files_keep_their_bytes_and_extension(tmp_path: Path) -> None:
    flac = tmp_path / "a.flac"
    flac.write_bytes(b"fLaC-not-really")
    assert AudioSerializer().serialize(str(flac)) == (b"fLaC-not-really", "audio:flac")
    # As LitData: bytes= audio is named WAV whatever it holds (decoders read the bytes' kind).
    assert AudioSerializer().serialize(Audio(bytes=b"OggS....")) == (b"OggS....", "audio:wav")


def test_raw_pcm_becomes_wav_and_needs_a_rate(tmp_path: Path) -> None:
    pcm = tmp_path / "a.pcm"
    pcm.write_bytes(np.array([0, 1000, -1000], "<i2").tobytes())
    with pytest.raises(ValueError, match="sampling_rate"):
        AudioSerializer().serialize(Audio(path=pcm))
    data, name = AudioSerializer().serialize(Audio(path=pcm, sampling_rate=8000))
    decoded = AudioSerializer().deserialize(data)
    assert name == "audio:wav"
    np.testing.assert_array_equal(decoded["array"], np.array([0, 1000, -1000]) / 32768)


def test_audio_decode_modes() -> None:
    data, _ = AudioSerializer().serialize(Audio(array=STEREO, sampling_rate=8000))
    samples, rate = AudioSerializer(decode="samples").deserialize(data)
    assert isinstance(samples, torch.Tensor)
    assert (samples.shape, rate) == ((2, 400), 8000)
    assert AudioSerializer(decode="bytes").deserialize(memoryview(data)) == data
    decoded = AudioSerializer().deserialize(data)
    assert isinstance(decoded, DecodedAudio)
    assert dict(decoded).keys() == {"array", "sampling_rate"}
    with pytest.raises(ValueError, match="decode"):
        AudioSerializer(decode="frames")


def _torchcodec_works() -> bool:
    try:
        import torchcodec.decoders  # noqa: F401
    except (ImportError, OSError, RuntimeError):
        return False
    return True


@pytest.mark.skipif(_torchcodec_works(), reason="needs a machine where torchcodec cannot load")
def test_non_wav_audio_without_torchcodec_says_what_to_install() -> None:
    decoded = AudioSerializer().deserialize(b"fLaC" + bytes(40))
    with pytest.raises(ImportError, match=r"pip install '.*\[audio\]'.*FFmpeg"):
        decoded["array"]
    wav, _ = AudioSerializer().serialize(Audio(array=WAVE, sampling_rate=8000))
    resampled = AudioSerializer(sampling_rate=16000).deserialize(wav)
    with pytest.raises(ImportError, match=r"'sample_rate': 16000.*\[audio\]'"):
        resampled["array"]


class _VideoBytes(VideoSerializer):
    def __init__(self) -> None:
        super().__init__(decode="bytes")


MP4 = b"\x00\x00\x00\x18ftypmp42" + bytes(64)


def _video_file() -> Path:
    path = MEDIA / "clip.webm"
    path.write_bytes(b"\x1aE\xdf\xa3" + bytes(32))
    return path


class TestVideoBytes(SerializerContract):
    serializer_class = _VideoBytes
    samples = [Video(bytes=MP4), Video(path=_video_file()), str(_video_file())]
    expected = [MP4, _video_file().read_bytes(), _video_file().read_bytes()]
    bad_inputs = [b"bytes", Video()]


def test_video_names_record_the_container() -> None:
    serializer = VideoSerializer()
    assert serializer.serialize(Video(bytes=MP4))[1] == "video:mp4"
    assert serializer.serialize(str(_video_file()))[1] == "video:webm"
    assert serializer.serialize(Video(path=_video_file()))[1] == "video:webm"


@pytest.mark.skipif(_torchcodec_works(), reason="needs a machine where torchcodec cannot load")
def test_video_without_torchcodec_says_what_to_install() -> None:
    with pytest.raises(ImportError, match=r"pip install '.*\[video\]'.*FFmpeg"):
        VideoSerializer().deserialize(MP4)
    with pytest.raises(ImportError, match=r"\[video\]'"):
        VideoSerializer().serialize(Video(array=np.zeros((2, 8, 8, 3), np.uint8)))


def _pdf_file() -> Path:
    path = MEDIA / "doc.pdf"
    path.write_bytes(pdf_bytes(3))
    return path


class TestPdf(SerializerContract):
    serializer_class = PdfSerializer
    samples = [Pdf(bytes=pdf_bytes(1)), pdf_bytes(2), Pdf(path=_pdf_file()), str(_pdf_file())]
    expected = [(100,), (100, 101), (100, 101, 102), (100, 101, 102)]
    bad_inputs = [Pdf(bytes=b"not a pdf"), 3]

    def comparable(self, value: Any) -> Any:
        assert isinstance(value, pypdf.PdfReader)
        return tuple(int(page.mediabox.width) for page in value.pages)


def test_pdf_bytes_are_claimed_before_plain_bytes_and_open_documents_too() -> None:
    assert PdfSerializer().can_serialize(pdf_bytes(1))
    assert not PdfSerializer().can_serialize(b"plain bytes")
    reader = pypdf.PdfReader(io.BytesIO(pdf_bytes(2)))
    assert PdfSerializer().serialize(reader)[0] == pdf_bytes(2)
    assert PdfSerializer().serialize(Pdf(pdf=reader))[0] == pdf_bytes(2)


VOXELS = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
AFFINE = np.diag([2.0, 3.0, 4.0, 1.0])


def _nifti_file() -> Path:
    path = MEDIA / "brain.nii.gz"
    nibabel.save(nibabel.Nifti1Image(VOXELS * 2, AFFINE), path)
    return path


class TestNifti(SerializerContract):
    serializer_class = NiftiSerializer
    samples = [
        Nifti(array=VOXELS, affine=AFFINE),
        Nifti(array=VOXELS),
        nibabel.Nifti1Image(VOXELS, AFFINE),
        Nifti(path=_nifti_file()),
        str(_nifti_file()),
    ]
    expected = [
        (VOXELS, AFFINE),
        (VOXELS, np.eye(4)),
        (VOXELS, AFFINE),
        (VOXELS * 2, AFFINE),
        (VOXELS * 2, AFFINE),
    ]
    bad_inputs = [3, "not-a-file.nii"]

    def comparable(self, value: Any) -> Any:
        assert isinstance(value, nibabel.Nifti1Image)
        return np.asarray(value.dataobj), np.asarray(value.affine, dtype=np.float64)


def test_nifti_names_are_litdatas() -> None:
    gz = _nifti_file()
    serializer = NiftiSerializer()
    assert serializer.serialize(Nifti(array=VOXELS))[1] == "nifti:nii"
    assert serializer.serialize(str(gz)) == (gz.read_bytes(), "nifti:nii.gz")
    # LitData 0.2.76 names a wrapped path by its last suffix, and bytes= as uncompressed.
    assert serializer.serialize(Nifti(path=gz)) == (gz.read_bytes(), "nifti:gz")
    assert serializer.serialize(Nifti(bytes=gz.read_bytes()))[1] == "nifti:nii"
    # A volume loaded from a file is stored as that file.
    assert serializer.serialize(nibabel.load(gz)) == (gz.read_bytes(), "nifti:nii.gz")


def _ply_file() -> Path:
    path = MEDIA / "box.ply"
    trimesh.creation.box(extents=(1, 2, 3)).export(path)
    return path


def _mesh_summary(value: Any) -> tuple[tuple[float, ...], int]:
    mesh = value.to_geometry() if isinstance(value, trimesh.Scene) else value
    return tuple(np.round(mesh.extents, 6).tolist()), len(mesh.faces)


class TestMesh(SerializerContract):
    serializer_class = MeshSerializer
    samples = [
        Mesh(mesh=trimesh.creation.box(extents=(1, 1, 1))),
        trimesh.creation.box(extents=(2, 1, 1)),
        Mesh(mesh=trimesh.creation.box(extents=(1, 2, 2)), file_type="stl"),
        Mesh(path=_ply_file()),
        str(_ply_file()),
    ]
    expected = [
        ((1.0, 1.0, 1.0), 12),
        ((2.0, 1.0, 1.0), 12),
        ((1.0, 2.0, 2.0), 12),
        ((1.0, 2.0, 3.0), 12),
        ((1.0, 2.0, 3.0), 12),
    ]
    bad_inputs = [Mesh(bytes=b"x", file_type="obj"), 3]

    def comparable(self, value: Any) -> Any:
        return _mesh_summary(value)


def test_mesh_names_record_the_file_type() -> None:
    assert MeshSerializer().serialize(Mesh(mesh=trimesh.creation.box()))[1] == "mesh:glb"
    assert MeshSerializer().serialize(str(_ply_file()))[1] == "mesh:ply"
    # As LitData with trimesh >= 4.5 (which no longer records the file): exported as GLB.
    assert MeshSerializer().serialize(trimesh.load(_ply_file()))[1] == "mesh:glb"


PIXELS = np.arange(48, dtype=np.uint16).reshape(6, 8)


def _tiff_file() -> Path:
    path = MEDIA / "scan.tif"
    tifffile.imwrite(path, PIXELS * 3)
    return path


class TestTifffile(SerializerContract):
    serializer_class = TifffileSerializer
    samples = [Tiff(array=PIXELS), Tiff(path=_tiff_file()), str(_tiff_file())]
    expected = [PIXELS, PIXELS * 3, PIXELS * 3]
    bad_inputs = [3, "missing.tif"]


class TestTiffAlias(SerializerContract):
    serializer_class = TiffSerializer
    claims = False
    samples = [Tiff(array=PIXELS)]
    expected = [PIXELS]


def test_tiff_wrappers_are_named_tiff_and_paths_tifffile() -> None:
    assert TifffileSerializer().serialize(Tiff(array=PIXELS))[1] == "tiff"
    assert TifffileSerializer().serialize(str(_tiff_file()))[1] == "tifffile"


X = torch.arange(6, dtype=torch.float32).reshape(3, 2)
EDGES = torch.tensor([[0, 1], [1, 2]])


def _hetero() -> Any:
    graph = pyg_data.HeteroData()
    graph["paper"].x = torch.ones(2, 3)
    graph["author", "writes", "paper"].edge_index = torch.tensor([[0, 0], [0, 1]])
    return graph


class TestGraph(SerializerContract):
    serializer_class = GraphSerializer
    samples = [
        Graph(x=X, edge_index=EDGES, y=torch.tensor([1])),
        Graph(edge_index=EDGES, data={"name": "mol", "weight": torch.tensor([0.5])}),
        pyg_data.Data(x=X, edge_index=EDGES, n=3),
        _hetero(),
    ]
    expected = [
        {"x": X, "edge_index": EDGES, "y": torch.tensor([1])},
        {"edge_index": EDGES, "name": "mol", "weight": torch.tensor([0.5])},
        {"x": X, "edge_index": EDGES, "n": 3},
        _hetero().to_dict(),
    ]
    bad_inputs = [3, {"x": X}]

    def comparable(self, value: Any) -> Any:
        assert isinstance(value, pyg_data.Data | pyg_data.HeteroData), type(value)
        return value.to_dict()


def test_opaque_graphs_are_pickled_as_graph_pickle() -> None:
    data, name = GraphSerializer().serialize(Graph(data=[(0, 1), (1, 2)]))
    assert name == "graph:pickle"
    reader = GraphSerializer()
    reader.setup(name)
    assert reader.deserialize(data) == [(0, 1), (1, 2)]


def test_graph_pack_is_ldgr_v3() -> None:
    data, name = GraphSerializer().serialize(Graph(x=X))
    assert (name, data[:5]) == ("graph", b"LDGR\x03")
    with pytest.raises(ValueError, match="LDGR"):
        GraphSerializer().deserialize(b"LDGR\x02" + data[5:])


def test_media_leaves_in_one_dataset_record_litdatas_names(tmp_path: Path) -> None:
    from litdata.engine.items.wrappers import JpegArray

    sample = {
        "audio": Audio(array=WAVE, sampling_rate=8000),
        "nifti": Nifti(array=VOXELS),
        "mesh": Mesh(mesh=trimesh.creation.box()),
        "tiff": Tiff(array=PIXELS),
        "jpegs": JpegArray(images=[np.zeros((4, 4, 3), np.uint8)]),
        "graph": Graph(x=X),
        "opaque": Graph(data=[1]),
        "pdf": Pdf(bytes=pdf_bytes(1)),
    }
    write_dataset([sample], tmp_path / "ds", chunk_size=1)
    reader = DatasetReader(tmp_path / "ds")
    assert reader.index.config.data_format == (
        "audio:wav",
        "nifti:nii",
        "mesh:glb",
        "tiff",
        "jpeg_array",
        "graph",
        "graph:pickle",
        "pdf",
    )
    read = reader[0]
    assert read["audio"]["sampling_rate"] == 8000
    assert read["jpegs"][0].shape == (3, 4, 4)
    assert read["opaque"] == [1]


def test_graph_mappings_put_fields_over_data_and_convert_to_pyg() -> None:
    graph = Graph(x=X, data={"x": torch.zeros(1), "name": "mol"})
    assert list(graph.to_mapping()) == ["x", "name"]
    assert graph.to_mapping()["x"] is X
    pyg = graph.to_pyg()
    assert isinstance(pyg, pyg_data.Data)
    assert torch.equal(pyg.x, X)
    with pytest.raises(TypeError, match="not a mapping"):
        Graph(data=[1]).to_mapping()


def test_decoded_audio_pickles_as_its_file() -> None:
    import pickle

    data, _ = AudioSerializer().serialize(Audio(array=WAVE, sampling_rate=8000))
    decoded = AudioSerializer().deserialize(data)
    decoded["array"]  # decoded once; the copy carries only the file
    again = pickle.loads(pickle.dumps(decoded))
    assert again.data == data
    np.testing.assert_array_equal(again["array"], decoded["array"])


def test_litdatas_serializer_attributes():
    """LitData's attributes: the audio settings as given, the bool size, the text leaf name."""
    from litdata.streaming.serializers import AudioSerializer, BooleanSerializer, TextSerializer

    audio = AudioSerializer(sampling_rate=16000, num_channels=1)
    assert (audio.sampling_rate, audio.num_channels) == (16000, 1)
    assert (AudioSerializer().sampling_rate, AudioSerializer().num_channels) == (None, None)
    assert BooleanSerializer().size == 1
    data, name = TextSerializer().serialize(Text(text="héllo"))
    assert (bytes(data), name) == ("héllo".encode(), "text")


@pytest.mark.parametrize(
    ("serializer", "payload", "suffix", "name"),
    [
        (MeshSerializer, b"solid x\nendsolid x\n", "stl", "mesh:stl"),
        (NiftiSerializer, b"not-really-nifti", "nii", "nifti:nii"),
        (PdfSerializer, b"%PDF-1.4 tiny", "pdf", "pdf"),
    ],
)
def test_decode_false_reads_the_files_bytes_back(tmp_path, serializer, payload, suffix, name):
    """LitData's ``decode=False``: the leaf comes back as the bytes written."""
    path = tmp_path / f"file.{suffix}"
    path.write_bytes(payload)
    raw = serializer(decode=False)
    assert raw.can_serialize(str(path))
    data, written_as = raw.serialize(str(path))
    assert written_as == name
    raw.setup(written_as)
    assert raw.deserialize(data) == payload
    assert serializer().decode is True
