"""A fake of Google's cloud eval service on loopback, for tests: Google's eval SDK (`agentplatform`,
as agents-cli and agentdiff's workers use it) reaches it through its real HTTP client
(`GOOGLE_VERTEX_BASE_URL`), with credentials this server gives too.

It speaks `POST /{version}/projects/{project}/locations/{location}:evaluateInstances` and, as a
Compute Engine metadata server, gives the token and the project. Its score for a metric is a digest of what it was sent (the metric and the instance),
so two tools get equal scores only by sending the same request. Every request is kept in `calls`.
"""

from __future__ import annotations

import hashlib
import json
import re
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from fake_gemini import LoopbackFake

_PATH = re.compile(r"^/(?P<version>[^/]+)/projects/(?P<project>[^/]+)/locations/(?P<location>[^/:]+)/?:evaluateInstances")


def score_of(body: dict[str, Any]) -> tuple[float, str]:
    """The fake's score and explanation for one request."""
    digest = hashlib.sha256(json.dumps({"metrics": body.get("metrics"), "instance": body.get("instance")}, sort_keys=True).encode()).hexdigest()
    return float(1 + int(digest, 16) % 5), f"request {digest[:12]}"


class FakeVertex(LoopbackFake):
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []  # {"path", "project", "location", "body", "authorization"}
        super().__init__("fake-vertex")

    def env(self, folder: Path, project: str = "fake-project") -> dict[str, str]:
        """The environment that points the eval SDK here, with credentials from this server too (as
        the metadata server of a Compute Engine machine gives them; `folder` is an empty gcloud
        config, so no real credentials are found first)."""
        host = self.url.removeprefix("http://")
        return {"GOOGLE_VERTEX_BASE_URL": self.url, "GCE_METADATA_HOST": host, "GCE_METADATA_IP": host, "CLOUDSDK_CONFIG": str(folder),
                "GOOGLE_CLOUD_PROJECT": project}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # the metadata server: a token, the account and the project
                path = self.path.split("?")[0]
                if path.endswith("/token"):
                    return self._send(200, {"access_token": "fake-token", "expires_in": 3600, "token_type": "Bearer"})
                if path.endswith("/project/project-id"):
                    return self._send(200, "fake-project")
                if "/service-accounts/" in path:
                    return self._send(200, {"email": "fake@fake-project.iam.gserviceaccount.com", "aliases": ["default"],
                                            "scopes": ["https://www.googleapis.com/auth/cloud-platform"]})
                return self._send(200, "")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                match = _PATH.match(self.path)
                if match is None:
                    return self._send(404, {"error": {"code": 404, "message": f"no such path {self.path}"}})
                body = json.loads(raw or b"{}")
                with fake._lock:
                    fake.calls.append({"path": self.path, "project": match["project"], "location": match["location"], "body": body,
                                       "authorization": self.headers.get("authorization")})
                score, explanation = score_of(body)
                self._send(200, {"metricResults": [{"score": score, "explanation": explanation}]})

            def _send(self, status: int, payload: Any) -> None:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("metadata-flavor", "Google")
                self.send_header("content-type", "text/plain" if isinstance(payload, str) else "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
