"""What the live audit could read that is a secret by construction (passwords, credentials,
user data, pre-shared keys, environment variables) can never be declared by a collector, so it
is never sent: scanner/aws/clients.py SECRET_READS and SECRET_SERVICES, checked against
botocore's service models (a misspelt entry would leave the real operation open)."""

from __future__ import annotations

import boto3
import botocore.session
import pytest

from scanner.aws.clients import (
    SECRET_READS,
    SECRET_SERVICES,
    ClientFactory,
    check_declarable,
)
from scanner.aws.registry import declared_calls

REGION = "us-east-1"


@pytest.mark.parametrize(("service", "operation"), sorted(SECRET_READS))
def test_each_secret_read_is_a_real_operation_and_refused(service: str, operation: str) -> None:
    model = botocore.session.get_session().get_service_model(service)
    assert operation in model.operation_names
    with pytest.raises(ValueError):
        check_declarable(service, operation)


@pytest.mark.parametrize(("service", "operation"), [
    ("ec2", "DescribeVpnConnections"), ("sts", "GetSessionToken"),
    ("sagemaker", "DescribeNotebookInstanceLifecycleConfig"), ("lambda", "GetFunction"),
    ("ecr", "GetAuthorizationToken"), ("ssm", "GetParametersByPath"),
    ("secretsmanager", "BatchGetSecretValue"),
])
def test_no_client_is_built_for_one(service: str, operation: str) -> None:
    with pytest.raises(ValueError):
        ClientFactory().client(boto3.Session(region_name=REGION), service, [operation])


def test_whole_secret_services_are_refused() -> None:
    for service in SECRET_SERVICES:
        model = botocore.session.get_session().get_service_model(service)
        for operation in model.operation_names:
            with pytest.raises(ValueError):
                check_declarable(service, operation)


def test_no_collector_declares_one() -> None:
    for call in declared_calls():
        assert (call.service, call.operation) not in SECRET_READS
        assert call.service not in SECRET_SERVICES
