"""How the S3, GCS and Azure backends take LitData's options and credentials.

The S3 credential tests run against a moto server that checks credentials (moto's IAM
emulation: after ``INITIAL_NO_AUTH_ACTION_COUNT`` unauthenticated requests, every request must
be signed with a key moto issued, by a user whose policy allows it).
"""

import importlib
import json
import sys

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from support.servers import start_s3

from litdata.engine.boundary.resolve import resolve
from litdata.plugins.storage.azure import adlfs_options
from litdata.plugins.storage.gcs import GSStorage, gcsfs_options
from litdata.plugins.storage.s3 import s3fs_options

#: botocore >= 1.36 checks whole-object checksums on every answer unless told "when_required"
#: (litdata checks every byte itself, and a ranged answer cannot match a whole checksum).
CHECKSUMS = (
    {"response_checksum_validation": "when_required"}
    if "response_checksum_validation" in getattr(Config, "OPTION_DEFAULTS", {})
    else {}
)
DEFAULT_CONFIG = {
    "connect_timeout": 5,
    "read_timeout": 10,
    "retries": {"total_max_attempts": 1, "mode": "standard"},
    "max_pool_connections": 16,  # the node's connection budget: parallel parts reuse them
    **CHECKSUMS,
}


def test_boto3_names_become_s3fs_names():
    options = {
        "endpoint_url": "http://e",
        "aws_access_key_id": "a",
        "aws_secret_access_key": "b",
        "aws_session_token": "c",
        "region_name": "eu-west-3",
        "verify": False,
    }
    assert s3fs_options(options, {}) == {
        "endpoint_url": "http://e",
        "key": "a",
        "secret": "b",
        "token": "c",
        "client_kwargs": {"region_name": "eu-west-3", "verify": False},
        "config_kwargs": DEFAULT_CONFIG,
    }


def test_s3fs_names_and_the_readme_spelling_are_accepted():
    options = {
        "key": "a",
        "AWS_SECRET_ACCESS_KEY": "b",
        "S3_ENDPOINT_URL": "http://e",
        "anon": False,
    }
    given = s3fs_options({**options, "client_kwargs": {"region_name": "r"}}, {})
    assert given["key"] == "a"
    assert given["secret"] == "b"
    assert given["endpoint_url"] == "http://e"
    assert given["anon"] is False
    assert given["client_kwargs"] == {"region_name": "r"}


def test_a_botocore_config_overrides_the_defaults():
    config = Config(signature_version=UNSIGNED, read_timeout=7, retries={"max_attempts": 3})
    given = s3fs_options({"config": config}, {})["config_kwargs"]
    assert given == {
        "connect_timeout": 5,
        "read_timeout": 7,
        "signature_version": UNSIGNED,
        "retries": {"max_attempts": 3},
        "max_pool_connections": 16,
        **CHECKSUMS,
    }


def test_the_request_timeouts_are_a_third_of_the_storage_timeout(monkeypatch):
    monkeypatch.setenv("LITDATA_STORAGE_TIMEOUT", "6")
    given = s3fs_options({}, {})["config_kwargs"]
    assert (given["connect_timeout"], given["read_timeout"]) == (2, 2)
    timeout = gcsfs_options({})["requests_timeout"]
    assert (timeout.sock_connect, timeout.sock_read, timeout.total) == (2, 2, None)
    monkeypatch.setenv("LITDATA_STORAGE_TIMEOUT", "60")
    given = s3fs_options({}, {})["config_kwargs"]
    assert (given["connect_timeout"], given["read_timeout"]) == (5, 20)


def test_session_options_are_boto3_session_arguments():
    given = s3fs_options({}, {"profile_name": "research", "region_name": "us-west-2"})
    assert given["profile"] == "research"
    assert given["client_kwargs"] == {"region_name": "us-west-2"}


@pytest.mark.parametrize(
    ("storage", "session", "message"),
    [
        ({"key": "a", "aws_access_key_id": "b"}, {}, r"'key' is given twice"),
        ({"region_name": "a"}, {"region_name": "b"}, r"'region_name' is given twice"),
    ],
)
def test_a_setting_given_twice_is_an_error(storage, session, message):
    with pytest.raises(ValueError, match=message):
        s3fs_options(storage, session)


def test_an_unknown_s3_option_is_an_error_with_a_suggestion():
    with pytest.raises(TypeError, match=r"Unknown S3 storage option 'endpoint'.*'endpoint_url'"):
        resolve("s3://bucket/ds", storage_options={"endpoint": "http://e"})
    with pytest.raises(TypeError, match=r"does not take session_options \['botocore_session'\]"):
        resolve("s3://bucket/ds", session_options={"botocore_session": object()})


@pytest.mark.parametrize("scheme", ["gs", "gcs", "az", "azure", "abfs"])
def test_only_s3_takes_session_options(scheme):
    with pytest.raises(TypeError, match="session_options"):
        resolve(f"{scheme}://bucket/ds", session_options={"profile_name": "p"})


def test_google_client_names_become_gcsfs_names():
    credentials = object()
    given = gcsfs_options(
        {"project": "p", "credentials": credentials, "client_options": {"api_endpoint": "http://e"}}
    )
    assert given["project"] == "p"
    assert given["token"] is credentials
    assert given["endpoint_url"] == "http://e"
    with pytest.raises(ValueError, match="'token' is given twice"):
        gcsfs_options({"token": "anon", "credentials": credentials})


def test_an_azure_account_url_names_the_account():
    given = adlfs_options(
        {"account_url": "https://research.blob.core.windows.net", "credential": "k"}
    )
    assert given == {
        "account_name": "research",
        "account_host": "research.blob.core.windows.net",
        "credential": "k",
    }
    with pytest.raises(ValueError, match="keep one"):
        adlfs_options({"account_url": "https://a.blob.core.windows.net", "account_name": "b"})


@pytest.mark.parametrize(
    ("module", "dependency", "extra"),
    [("s3", "s3fs", "s3"), ("gcs", "gcsfs", "gcs"), ("azure", "adlfs", "azure")],
)
def test_a_missing_client_library_names_the_extra_to_install(
    monkeypatch, module, dependency, extra
):
    monkeypatch.setitem(sys.modules, dependency, None)  # as if not installed
    monkeypatch.delitem(sys.modules, f"litdata.plugins.storage.{module}")
    with pytest.raises(ImportError, match=rf"pip install '.*\[{extra}\]'"):
        importlib.import_module(f"litdata.plugins.storage.{module}")


def test_an_unsigned_botocore_config_reads_public_objects(s3_server):
    bucket = s3_server.new_bucket()
    client = boto3.client("s3", **s3_server.storage_options)
    client.put_object(Bucket=bucket, Key="a", Body=b"1", ACL="public-read")
    options = {"endpoint_url": s3_server.endpoint, "config": Config(signature_version=UNSIGNED)}
    assert resolve(s3_server.url(bucket), storage_options=options).read("a") == b"1"


# -- credentials, checked by a moto server that enforces them ---------------------------------
@pytest.fixture(scope="module")
def s3_with_auth(tmp_path_factory):
    """A moto server that checks credentials, a bucket with ``a.bin``, and a valid key."""
    with start_s3(
        tmp_path_factory.mktemp("moto-auth"), {"INITIAL_NO_AUTH_ACTION_COUNT": "3"}
    ) as store:
        anyone = {"endpoint_url": store.endpoint, "region_name": "us-east-1"}
        iam = boto3.client("iam", aws_access_key_id="x", aws_secret_access_key="x", **anyone)
        iam.create_user(UserName="reader")
        policy = {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}
        document = json.dumps({"Version": "2012-10-17", "Statement": [policy]})
        iam.put_user_policy(UserName="reader", PolicyName="s3", PolicyDocument=document)
        key = iam.create_access_key(UserName="reader")["AccessKey"]
        valid = {
            **anyone,
            "aws_access_key_id": key["AccessKeyId"],
            "aws_secret_access_key": key["SecretAccessKey"],
        }
        boto3.client("s3", **valid).create_bucket(Bucket="b-auth")
        boto3.client("s3", **valid).put_object(Bucket="b-auth", Key="a.bin", Body=b"secret")
        yield store, valid


@pytest.mark.parametrize(
    "wrong", [{"aws_secret_access_key": "wrong"}, {"aws_access_key_id": "AKIANOSUCHKEY"}]
)
def test_bad_s3_credentials_are_a_permission_error_naming_the_url(s3_with_auth, wrong):
    _, valid = s3_with_auth
    location = resolve("s3://b-auth", storage_options={**valid, **wrong})
    with pytest.raises(PermissionError, match=r"Access to s3://b-auth/a\.bin was refused"):
        location.read("a.bin")
    assert resolve("s3://b-auth", storage_options=valid).read("a.bin") == b"secret"


def test_s3_credentials_from_the_environment(s3_with_auth, monkeypatch):
    store, valid = s3_with_auth
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", valid["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", valid["aws_secret_access_key"])
    monkeypatch.setenv("AWS_ENDPOINT_URL", store.endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    assert resolve("s3://b-auth").read("a.bin") == b"secret"


def test_s3_credentials_from_a_profile_in_session_options(s3_with_auth, monkeypatch, tmp_path):
    store, valid = s3_with_auth
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[reader]\naws_access_key_id = {valid['aws_access_key_id']}\n"
        f"aws_secret_access_key = {valid['aws_secret_access_key']}\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    location = resolve(
        "s3://b-auth",
        storage_options={"endpoint_url": store.endpoint},
        session_options={"profile_name": "reader", "region_name": "us-east-1"},
    )
    assert location.read("a.bin") == b"secret"


def test_the_classic_gcsfs_filesystem_unless_the_extended_one_is_asked_for(monkeypatch):
    import gcsfs

    monkeypatch.delenv("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", raising=False)
    assert GSStorage().filesystem_class().__bases__ == (gcsfs.core.GCSFileSystem,)
    monkeypatch.setenv("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "true")
    assert GSStorage().filesystem_class().__bases__ == (gcsfs.GCSFileSystem,)


def test_no_s3_credentials_at_all_is_a_permission_error_saying_where_to_put_them(
    s3_server, monkeypatch, tmp_path
):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    location = resolve(s3_server.url("b-any"), storage_options={"endpoint_url": s3_server.endpoint})
    with pytest.raises(PermissionError, match=r"s3://b-any/a\.bin.*aws_access_key_id"):
        location.read("a.bin")
