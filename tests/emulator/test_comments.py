"""Issue (pull request) comments."""


def test_comment_lifecycle(installed):
    pr = installed.emu.open_pull_request(installed.full_name)
    comments = f"/repos/{installed.full_name}/issues/{pr['number']}/comments"
    created = installed.client.post(comments, json={"body": "Readiness: **blocked**"})
    assert created.status_code == 201
    comment = created.json()
    assert comment["user"]["type"] == "Bot"
    assert comment["user"]["login"] == "boardready[bot]"
    single = f"/repos/{installed.full_name}/issues/comments/{comment['id']}"
    assert installed.client.get(single).json()["body"] == "Readiness: **blocked**"
    assert installed.client.patch(single, json={"body": "Readiness: ready"}).json()["body"] == "Readiness: ready"
    listed = installed.client.get(comments).json()
    assert [c["id"] for c in listed] == [comment["id"]]
    assert installed.emu.comments(installed.full_name, pr["number"])[0]["body"] == "Readiness: ready"
    assert installed.client.delete(single).status_code == 204
    assert installed.client.get(single).status_code == 404
    assert installed.client.get(comments).json() == []


def test_comment_validation(installed):
    pr = installed.emu.open_pull_request(installed.full_name)
    comments = f"/repos/{installed.full_name}/issues/{pr['number']}/comments"
    assert installed.client.post(comments, json={}).status_code == 422
    assert installed.client.post(comments, json={"body": 5}).status_code == 422
    assert installed.client.post(comments, json={"body": "x" * 65537}).status_code == 422
    assert installed.client.post(f"/repos/{installed.full_name}/issues/999/comments", json={"body": "x"}).status_code == 404
    assert installed.emu.comments() == []


def test_comment_pagination(installed):
    pr = installed.emu.open_pull_request(installed.full_name)
    comments = f"/repos/{installed.full_name}/issues/{pr['number']}/comments"
    for i in range(5):
        installed.client.post(comments, json={"body": f"c{i}"})
    first = installed.client.get(comments, params={"per_page": 2})
    assert [c["body"] for c in first.json()] == ["c0", "c1"]
    assert 'rel="next"' in first.headers["Link"] and 'rel="last"' in first.headers["Link"]
    last = installed.client.get(comments, params={"per_page": 2, "page": 3})
    assert [c["body"] for c in last.json()] == ["c4"]


def test_pull_request_route(installed):
    pr = installed.emu.open_pull_request(installed.full_name, head_ref="rev-b", draft=True)
    got = installed.client.get(f"/repos/{installed.full_name}/pulls/{pr['number']}")
    assert got.status_code == 200
    assert (got.json()["head"]["sha"], got.json()["draft"]) == (pr["head"]["sha"], True)
