"""The provider interface and the errors every provider raises."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Literal

from gitmem.errors import GitmemError

InputType = Literal["query", "document"]
Vector = list[float]


class EmbeddingError(GitmemError):
    """A provider could not embed (unreachable, refused, malformed answer). The message says
    why and, where a setting is at fault, names it."""


class Embedder(ABC):
    """An embedding model. Subclasses implement ``embed_batch`` and describe themselves."""

    name: str = ""  # provider name: local | openai | gemini | voyage | ollama | fake
    max_batch: int = 64  # the most texts one embed_batch call may receive

    def __init__(self, model: str, *, endpoint: str | None = None,
                 dimensions: int | None = None) -> None:
        self.model = model
        self.endpoint = endpoint
        self.dimensions = dimensions

    @abstractmethod
    def embed_batch(self, texts: Sequence[str], *, input_type: InputType) -> list[Vector]:
        """One vector per text, in order. Raises EmbeddingError."""

    @property
    def fingerprint(self) -> str:
        """Identifies what the vectors mean: provider, model, endpoint, dimensions. Never a key.

        A change of fingerprint invalidates stored vectors (cached ones under the old
        fingerprint stay reusable should the user switch back)."""
        import hashlib  # with a provider only: a lexical recall imports this module too

        raw = "\x1f".join([self.name, self.model, self.endpoint or "", str(self.dimensions or "")])
        return f"{self.name}:{hashlib.sha256(raw.encode('utf-8')).hexdigest()[:16]}"

    def close(self) -> None:  # noqa: B027 - optional hook; most providers hold nothing
        """Release resources (HTTP connections, model memory)."""
