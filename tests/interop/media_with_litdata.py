"""Run by the peers' python: LitData 0.2.76 writes or reads the media samples.

``write DIR SCRATCH``: write ``media_samples.build`` samples with LitData's BinaryWriter.
``read DIR``: print ``index.json``'s data_format, then one summary per sample, as JSON lines.
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


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    else:
        read(sys.argv[2])
