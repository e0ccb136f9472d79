"""Run by the peers' python: LitData 0.2.76 writes or reads the media samples.

``write DIR SCRATCH``: write ``media_samples.build`` samples with LitData's BinaryWriter.
``read DIR``: print ``index.json``'s data_format, then one summary per sample, as JSON lines.
``temporal-write DIR`` / ``temporal-read DIR``: the same for ``TemporalArrayLoader`` records;
``temporal-windows DIR``: ``frame_counts`` and the ``media_samples.WINDOWS`` windows.
LitData reads ``tiff`` leaves only with a ``tiff`` serializer passed in (it registers the name
``tifffile``), and audio/video as bytes here (decoding them needs torchcodec and FFmpeg).
"""

import json
import sys
from pathlib import Path

import media_samples


def write(directory: str, scratch: str) -> None:
    from litdata.streaming.writer import BinaryWriter

    writer = BinaryWriter(directory, chunk_size=2)
    for index in range(media_samples.COUNT):
        writer.add_item(index, media_samples.build(index, Path(scratch)))
    writer.done()
    writer.merge()


def read(directory: str) -> None:
    from litdata import StreamingDataset
    from litdata.streaming.serializers import _SERIALIZERS, AudioSerializer, VideoSerializer

    serializers = {
        "tiff": _SERIALIZERS["tifffile"],
        "audio": AudioSerializer(decode="bytes"),
        "video": VideoSerializer(decode="bytes"),
    }
    dataset = StreamingDataset(directory, serializers=serializers)
    index = json.loads((Path(directory) / "index.json").read_text())
    print(json.dumps(index["config"]["data_format"]))
    for position in range(len(dataset)):
        print(json.dumps(media_samples.summary(dataset[position])))


def temporal_write(directory: str) -> None:
    from litdata import TemporalArrayLoader
    from litdata.streaming.writer import BinaryWriter

    loader = TemporalArrayLoader(field_groups=[["score", "valid"]])
    writer = BinaryWriter(directory, chunk_size=3, item_loader=loader)
    for index in range(len(media_samples.TRACKS)):
        writer.add_item(index, media_samples.temporal_record(index))
    writer.done()
    writer.merge()


def temporal_read(directory: str) -> None:
    from litdata import StreamingDataset, TemporalArrayLoader

    dataset = StreamingDataset(directory, item_loader=TemporalArrayLoader())
    for position in range(len(dataset)):
        print(json.dumps(media_samples.temporal_summary(dataset[position])))


def temporal_windows(directory: str) -> None:
    from litdata import StreamingDataset, TemporalArrayLoader

    dataset = StreamingDataset(directory, item_loader=TemporalArrayLoader())
    print(json.dumps(dataset.frame_counts))
    for index, start, frames, fields in media_samples.WINDOWS:
        window = dataset.read_window(index, start, frames, fields)
        print(json.dumps(media_samples.temporal_summary(window)))


if __name__ == "__main__":
    mode, directory = sys.argv[1], sys.argv[2]
    if mode == "write":
        write(directory, sys.argv[3])
    elif mode == "read":
        read(directory)
    elif mode == "temporal-write":
        temporal_write(directory)
    elif mode == "temporal-windows":
        temporal_windows(directory)
    else:
        temporal_read(directory)
