"""A reply that does not parse as the service's answer is an error, never an empty list
(scanner/aws/answers.py, on botocore's real operation models)."""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest

from scanner.aws.answers import UnreadableAnswer, check_answer

SESSION = botocore.session.get_session()


def op(service: str, name: str) -> Any:
    return SESSION.get_service_model(service).operation_model(name)


def reply(body: bytes, status: int = 200, ctype: str = "text/xml") -> dict[str, Any]:
    return {"status_code": status, "headers": {"content-type": ctype}, "body": body}


EC2_NS = b'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"'


@pytest.mark.parametrize(
    ("service", "name", "body"),
    [
        ("ec2", "DescribeVpcs", b"<DescribeVpcsResponse " + EC2_NS + b"><vpcSet/>"
                                b"</DescribeVpcsResponse>"),
        ("ec2", "DescribeVpcs", b'\xef\xbb\xbf<?xml version="1.0" encoding="UTF-8"?>\n<!-- x -->'
                                b"\n<DescribeVpcsResponse " + EC2_NS + b"/>"),
        ("autoscaling", "DescribeAutoScalingGroups",
         b"<DescribeAutoScalingGroupsResponse><DescribeAutoScalingGroupsResult/>"
         b"</DescribeAutoScalingGroupsResponse>"),
        ("sts", "GetCallerIdentity", b"<ns:GetCallerIdentityResponse xmlns:ns='x'/>"),
        ("kms", "ListAliases", b'{"Aliases": []}'),
    ],
)
def test_the_services_own_answers_pass(service: str, name: str, body: bytes) -> None:
    check_answer(operation_model=op(service, name), response_dict=reply(body))


@pytest.mark.parametrize(
    ("service", "name", "body", "ctype", "reason"),
    [
        ("ec2", "DescribeVpcEndpoints",
         b"<html><head><title>Sign in</title></head><body/></html>", "text/html; charset=utf-8",
         "HTTP 200 (text/html) whose root is <html>, not <DescribeVpcEndpointsResponse>: a "
         "proxy, a captive portal or a wrong endpoint answered"),
        ("ec2", "DescribeVpcEndpoints", b"<DescribeVpcsResponse " + EC2_NS + b"/>", "text/xml",
         "HTTP 200 (text/xml) whose root is <DescribeVpcsResponse>, not "
         "<DescribeVpcEndpointsResponse>: a proxy, a captive portal or a wrong endpoint "
         "answered"),
        ("ec2", "DescribeVpcs", b"<Response><Errors/></Response>", "text/xml",
         "HTTP 200 (text/xml) whose root is <Response>, not <DescribeVpcsResponse>: a proxy, a "
         "captive portal or a wrong endpoint answered"),
        ("ec2", "DescribeVpcs", b"   \n", "text/xml",
         "HTTP 200 with an empty body, not the DescribeVpcs answer"),
        ("autoscaling", "DescribeAutoScalingGroups", b'{"ok": true}', "application/json",
         "HTTP 200 (application/json) whose root is no XML element, not "
         "<DescribeAutoScalingGroupsResponse>: a proxy, a captive portal or a wrong endpoint "
         "answered"),
        ("kms", "ListAliases", b"<html><body>portal</body></html>", "text/html",
         "HTTP 200 (text/html) whose body is not a JSON object, not the ListAliases answer"),
        ("kms", "ListAliases", b'{"Aliases": [{"AliasName": "alias/x"', "application/json",
         "HTTP 200 (application/json) whose body is not a JSON object, not the ListAliases "
         "answer"),
        ("organizations", "ListAccounts", b"[]", "application/x-amz-json-1.1",
         "HTTP 200 (application/x-amz-json-1.1) whose body is not a JSON object, not the "
         "ListAccounts answer"),
        ("organizations", "ListAccounts", b"", "application/x-amz-json-1.1",
         "HTTP 200 with an empty body, not the ListAccounts answer"),
    ],
)
def test_what_is_not_the_answer_is_unreadable(
    service: str, name: str, body: bytes, ctype: str, reason: str
) -> None:
    with pytest.raises(UnreadableAnswer) as caught:
        check_answer(operation_model=op(service, name), response_dict=reply(body, ctype=ctype))
    assert str(caught.value) == reason  # what it is, never what it says


def test_error_statuses_are_left_to_botocore() -> None:
    """A 5xx page stays botocore's (a retryable HTTP error); a 4xx error body is parsed by it."""
    for status in (400, 403, 500, 503):
        check_answer(operation_model=op("ec2", "DescribeVpcs"),
                     response_dict=reply(b"<html>busy</html>", status, "text/html"))


def test_a_long_run_of_whitespace_costs_nothing() -> None:
    """The root element is looked for in the first 4 KiB, without backtracking."""
    with pytest.raises(UnreadableAnswer):
        check_answer(operation_model=op("ec2", "DescribeVpcs"),
                     response_dict=reply(b" " * 4_000_000 + b"x"))


@pytest.mark.parametrize(
    ("service", "name", "body", "reason"),
    [
        ("eks", "ListNodegroups", b"<html><body>portal</body></html>",
         "HTTP 200 (text/html) whose body is not a JSON object, not the ListNodegroups answer"),
        ("batch", "DescribeComputeEnvironments", b"",
         "HTTP 200 with an empty body, not the DescribeComputeEnvironments answer"),
        ("s3", "ListBuckets", b"<html><body>portal</body></html>",
         "HTTP 200 (text/html) whose root is <html>, not the ListBuckets answer: a proxy, a "
         "captive portal or a wrong endpoint answered"),
    ],
)
def test_rest_protocols_are_held_to_the_same(service: str, name: str, body: bytes,
                                             reason: str) -> None:
    """The services a GPU estate also lives in (EKS node groups, Batch compute environments)
    speak REST: a page there is no empty answer either."""
    with pytest.raises(UnreadableAnswer) as caught:
        check_answer(operation_model=op(service, name),
                     response_dict=reply(body, ctype="text/html"))
    assert str(caught.value) == reason
    check_answer(operation_model=op(service, name),
                 response_dict=reply(b"{}" if service != "s3" else b"<ListAllMyBucketsResult/>"))


@pytest.mark.parametrize(("service", "name", "body"), [
    ("eks", "ListClusters", b'{"message": "Forbidden by the corporate proxy"}'),
    ("kms", "ListAliases", b'{"error": "upstream unavailable"}'),
    ("sagemaker", "ListClusters", b'{"Message": "gateway timeout"}'),
    ("batch", "DescribeComputeEnvironments", b'{"status": 503}'),
])
def test_a_json_object_with_none_of_the_answers_members_is_unreadable(
        service: str, name: str, body: bytes) -> None:
    # a proxy's or gateway's JSON with a 200: botocore reads it as an answer without items
    with pytest.raises(UnreadableAnswer) as caught:
        check_answer(operation_model=op(service, name),
                     response_dict=reply(body, ctype="application/json"))
    assert "none of the" in str(caught.value)
    assert "Forbidden" not in str(caught.value)  # what it is, never what it says


@pytest.mark.parametrize(("service", "name", "body"), [
    ("eks", "ListClusters", b'{"clusters": []}'),
    ("eks", "ListClusters", b"{}"),
    ("kms", "ListAliases", b'{"Aliases": [], "Truncated": false, "NewFieldAwsAdded": 1}'),
    ("eks", "DescribeCluster", b'{"cluster": {"name": "x"}}'),
])
def test_an_answer_with_its_members_or_empty_passes(service: str, name: str, body: bytes) -> None:
    check_answer(operation_model=op(service, name),
                 response_dict=reply(body, ctype="application/json"))
