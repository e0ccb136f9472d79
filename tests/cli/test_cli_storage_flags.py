"""Credentials from the command line: ``--storage-option``, and errors in the command's terms."""

from __future__ import annotations

import os

from support.cli_process import litdata

import litdata as ld

_NO_AWS = {  # no credentials anywhere: botocore finds none (empty keys count as none)
    "AWS_ACCESS_KEY_ID": "",
    "AWS_SECRET_ACCESS_KEY": "",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
    "LITDATA_STORAGE_ATTEMPTS": "1",
}


def test_a_missing_credential_is_said_in_flags_and_the_flags_give_it(s3_server, tmp_path):
    bucket = s3_server.new_bucket()
    url = s3_server.url(bucket, "ds")
    ld.write_dataset(
        ({"id": i} for i in range(10)), url, chunk_size=5, storage_options=s3_server.storage_options
    )
    env = {
        **_NO_AWS,
        "AWS_ENDPOINT_URL": s3_server.endpoint,
        "LITDATA_CACHE_DIR": str(tmp_path / "cache"),
    }
    missing = litdata("inspect", url, env=env)
    assert missing.returncode == 1
    assert "--storage-option" in missing.stderr
    assert "storage_options" not in missing.stderr
    flags = [
        "--storage-option",
        f"endpoint_url={s3_server.endpoint}",
        "--storage-option",
        "aws_access_key_id=testing",
        "--storage-option",
        "aws_secret_access_key=testing",
    ]
    found = litdata("inspect", url, "--samples", "0", *flags, env=env)
    assert found.returncode == 0, found.stderr
    assert "items        10" in found.stdout
    verified = litdata("verify", url, "--quiet", *flags, env=env)
    assert verified.returncode == 0, verified.stdout
    bad = litdata("verify", url, "--storage-option", "anon", env=env)
    assert bad.returncode == 1
    assert "is not KEY=VALUE" in bad.stdout
