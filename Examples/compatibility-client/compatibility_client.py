#!/usr/bin/env python3
"""A page backend's use of Flowmeter's compatibility API (docs/compatibility.md).

Ask once per app build what it renders, keep the answer (revalidate with If-None-Match after max-age), and
filter each page before sending it: a widget whose type the build does not render is swapped for a fallback it
does render, or dropped; so is a widget that lacks a key the build requires. Standard library only.

    python3 compatibility_client.py --url http://127.0.0.1:8080 --key READ_KEY \
        --app com.example.shop --platform ios --version 5.2.1 [--build 5210] page.json
prints the filtered page.
"""

import argparse
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request


class CachedAnswer:
    def __init__(self, answer, etag, max_age):
        self.answer = answer
        self.etag = etag
        self.expires = time.monotonic() + max_age


class CompatibilityClient:
    """Answers per build, cached for the server's max-age, then revalidated with the ETag."""

    def __init__(self, base_url, read_key, timeout=2.0):
        self.base_url = base_url.rstrip("/")
        self.read_key = read_key
        self.timeout = timeout
        self._cache = {}

    def answer(self, app_id, platform, app_version, build=None):
        """The build's answer (a dict), or None when Flowmeter knows nothing of it (404)."""
        key = (app_id, platform, app_version, build)
        cached = self._cache.get(key)
        if cached and time.monotonic() < cached.expires:
            return cached.answer
        query = {"appID": app_id, "platform": platform, "appVersion": app_version}
        if build:
            query["build"] = build
        request = urllib.request.Request(
            self.base_url + "/v1/compatibility?" + urllib.parse.urlencode(query),
            headers={"Authorization": "Bearer " + self.read_key})
        if cached:
            request.add_header("If-None-Match", cached.etag)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.load(response)
                self._cache[key] = CachedAnswer(answer, response.headers.get("ETag", ""), _max_age(response))
                return answer
        except urllib.error.HTTPError as error:
            if error.code == 304 and cached:
                self._cache[key] = CachedAnswer(cached.answer, cached.etag, _max_age(error))
                return cached.answer
            if error.code == 404:
                return None
            raise


def _max_age(response):
    match = re.search(r"max-age=(\d+)", response.headers.get("Cache-Control", ""))
    return int(match.group(1)) if match else 0


def renders(widget, answer):
    """Whether the build draws this widget: it knows the type and (with a manifest) gets every required key."""
    types = answer.get("types", {})
    widget_type = widget.get("type")
    if widget_type in answer.get("unknownInTraffic", []):
        return False
    if answer.get("source") == "traffic":
        return True  # the least certain answer: only drop what the build reported unknown
    if widget_type not in types:
        return False
    data = widget.get("data", widget)
    return all(data.get(key) is not None for key in types[widget_type].get("required", []) if "." not in key)


def render_for(page, answer, fallbacks):
    """The page with every widget the build cannot draw swapped for a fallback it can, or dropped."""
    if answer is None:
        return page
    sections = []
    for section in page.get("sections", []):
        widgets = []
        for widget in section.get("widgets", []):
            if renders(widget, answer):
                widgets.append(widget)
                continue
            fallback = fallbacks.get(widget.get("type"))
            if fallback and renders(fallback, answer):
                widgets.append(fallback)
        sections.append(dict(section, widgets=widgets))
    return dict(page, sections=sections)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--platform", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--build")
    parser.add_argument("page")
    arguments = parser.parse_args()
    with open(arguments.page) as file:
        page = json.load(file)
    client = CompatibilityClient(arguments.url, arguments.key)
    answer = client.answer(arguments.app, arguments.platform, arguments.version, arguments.build)
    # A second ask within max-age comes from the cache; past it, a 304 keeps the same answer.
    assert client.answer(arguments.app, arguments.platform, arguments.version, arguments.build) == answer
    fallbacks = {"hologram_projector": {"type": "image_text_card", "data": {"title": "See it in the app"}}}
    print(json.dumps(render_for(page, answer, fallbacks), sort_keys=True))


if __name__ == "__main__":
    main()
