"""Embeddings from any server speaking the OpenAI ``POST /embeddings`` API.

Failures are ``EmbeddingFailedError``: retryable for what may pass (a timeout, no connection,
HTTP 429 or 5xx), not retryable for what will not (another 4xx, an answer that is not JSON or
not embeddings, a changed width). Messages name the failure, not the URL or the library's
text; the cause is chained, so the log has both.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from engramdb import tls, traces
from engramdb.core.embedding_port import FloatMatrix, l2_normalize
from engramdb.errors import EmbeddingFailedError

log = logging.getLogger(__name__)


class OpenAICompatibleEmbedder:
    """Embeddings from ``POST {base_url}/embeddings`` (OpenAI wire format)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        batch_size: int = 64,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.model_id = model
        self.batch_size = batch_size
        self.timeout = timeout
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, verify=tls.context())
        self._dimension: int | None = None
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            # Unknown until the server has answered once.
            self.embed(["dimension probe"])
        assert self._dimension is not None
        return self._dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[start : start + self.batch_size]))
            for start in range(0, len(texts), self.batch_size)
        ]
        return l2_normalize(np.concatenate(parts, axis=0))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatibleEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _embed_batch(self, texts: list[str]) -> FloatMatrix:
        with traces.span(f"embeddings {self.model}", self._attributes(len(texts)), kind=traces.Kind.CLIENT) as call:
            payload = self._post({"model": self.model, "input": texts})
            vectors = _parse_embeddings(payload, expected=len(texts))
            call.set_attribute("gen_ai.embeddings.dimension.count", int(vectors.shape[1]))
            usage = payload.get("usage") if isinstance(payload, dict) else None
            tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
            if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
                call.set_attribute("gen_ai.usage.input_tokens", tokens)
        self._check_dimension(vectors.shape[1])
        return vectors

    def _attributes(self, count: int) -> dict[str, traces.Value] | None:
        """An embedding call's span attributes (GenAI conventions), never the texts."""
        if not traces.on():
            return None
        url = httpx.URL(self.base_url)
        return {
            "gen_ai.operation.name": "embeddings",
            "gen_ai.provider.name": "openai",  # the API's flavour: any OpenAI-compatible endpoint
            "gen_ai.request.model": self.model,
            "server.address": url.host,
            "server.port": url.port or (443 if url.scheme == "https" else 80),
            "engramdb.embedding.texts": count,
        }

    def _check_dimension(self, width: int) -> None:
        with self._lock:
            if self._dimension is None:
                self._dimension = width
                log.info("embedding server %s model %s: dim=%d", self.base_url, self.model, width)
            elif width != self._dimension:
                raise EmbeddingFailedError(
                    f"the embedding width changed from {self._dimension} to {width}", retryable=False
                )

    def _post(self, body: dict[str, Any]) -> Any:
        try:
            response = self._client.post(f"{self.base_url}/embeddings", json=body, headers=traces.outgoing())
            response.raise_for_status()
            return response.json()
        except httpx.HTTPStatusError as error:
            status = error.response.status_code
            raise EmbeddingFailedError(
                f"the embedding endpoint answered HTTP {status}", retryable=status == 429 or status >= 500
            ) from error
        except httpx.TimeoutException as error:
            message = f"the embedding endpoint did not answer within {self.timeout:g} s"
            raise EmbeddingFailedError(message, retryable=True) from error
        except httpx.UnsupportedProtocol as error:  # a configured URL no request can use
            raise EmbeddingFailedError("the embedding endpoint's URL is not http(s)", retryable=False) from error
        except httpx.TransportError as error:
            raise EmbeddingFailedError("the embedding endpoint could not be reached", retryable=True) from error
        except ValueError as error:  # the body was not JSON
            raise EmbeddingFailedError("the embedding endpoint's answer is not JSON", retryable=False) from error


def _parse_embeddings(payload: Any, expected: int) -> FloatMatrix:
    """Read ``data[*].embedding`` in ``index`` order, validating the shape."""
    try:
        items = sorted(payload["data"], key=lambda item: int(item["index"]))
        vectors = np.array([item["embedding"] for item in items], dtype=np.float32)
    except (KeyError, TypeError, ValueError) as error:
        raise EmbeddingFailedError("the embedding endpoint's answer holds no embeddings", retryable=False) from error
    if vectors.ndim != 2 or vectors.shape[0] != expected or vectors.shape[1] == 0:
        raise EmbeddingFailedError(
            f"the embedding endpoint's answer has shape {vectors.shape}, expected ({expected}, dim)",
            retryable=False,
        )
    return vectors
