"""Every setting of StoryGraph, read once from the environment and `.env`.

Nothing else in the package reads `os.environ`: the composition root
(`storygraph.services.build_services`) reads a `Settings` once and hands it on.
`.env.example` lists every field below; `tests/unit/test_settings.py` keeps the two in sync.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

LLMProvider = Literal["auto", "embedded", "openai", "azure", "openai_compatible", "none"]
RerankStrategy = Literal["auto", "batched", "per_fact"]
ExtractorChoice = Literal["auto", "parser", "model"]
QuestionTranslation = Literal["dictionary", "model", "dictionary+model", "off"]
CrossLanguageAnswer = Literal["sources", "question"]
VerifyMode = Literal["gate", "label"]
"""What the verifier's confidence does to an answer (storygraph.qa.verify.gate)."""


def _env(name: str) -> AliasChoices:
    return AliasChoices(name, name.lower())


class Settings(BaseSettings):
    """Application settings. Field aliases are the environment variable names."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        frozen=True,
    )

    # --- storage -------------------------------------------------------------------
    data_dir: Path = Field(Path("data"), validation_alias=_env("STORYGRAPH_DATA_DIR"))
    graph_name: str = Field("storygraph", validation_alias=_env("STORYGRAPH_GRAPH_NAME"))
    store_idle_s: float = Field(300.0, ge=0, validation_alias=_env("STORYGRAPH_STORE_IDLE_S"))
    neo4j_uri: str | None = Field(None, validation_alias=_env("NEO4J_URI"))
    neo4j_username: str = Field("neo4j", validation_alias=_env("NEO4J_USERNAME"))
    neo4j_password: SecretStr = Field(SecretStr(""), validation_alias=_env("NEO4J_PASSWORD"))
    neo4j_database: str = Field("neo4j", validation_alias=_env("NEO4J_DATABASE"))

    # --- language model --------------------------------------------------------------
    llm_provider: LLMProvider = Field("auto", validation_alias=_env("STORYGRAPH_LLM_PROVIDER"))
    llm_model: str = Field("", validation_alias=_env("STORYGRAPH_LLM_MODEL"))
    openai_api_key: SecretStr | None = Field(None, validation_alias=_env("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(None, validation_alias=_env("OPENAI_BASE_URL"))
    azure_openai_endpoint: str | None = Field(None, validation_alias=_env("AZURE_OPENAI_ENDPOINT"))
    azure_openai_api_key: SecretStr | None = Field(
        None, validation_alias=_env("AZURE_OPENAI_API_KEY")
    )
    azure_openai_api_version: str = Field(
        "2024-10-21", validation_alias=_env("AZURE_OPENAI_API_VERSION")
    )
    azure_openai_deployment: str | None = Field(
        None, validation_alias=_env("AZURE_OPENAI_DEPLOYMENT")
    )
    llm_timeout_s: float = Field(120.0, gt=0, validation_alias=_env("STORYGRAPH_LLM_TIMEOUT_S"))
    # 90 s: about 3x the p90 of a whole answer by the embedded default on the slowest 2-core
    # machine measured (23.7 s on the test split, docs/EVALUATION.md), with room for a first
    # answer that reads the whole prompt; past it an answer shows what was found so far
    answer_deadline_s: float = Field(
        90.0, gt=0, validation_alias=_env("STORYGRAPH_ANSWER_DEADLINE_S")
    )
    llm_max_retries: int = Field(2, ge=0, validation_alias=_env("STORYGRAPH_LLM_MAX_RETRIES"))
    llm_temperature: float = Field(0.0, ge=0, validation_alias=_env("STORYGRAPH_LLM_TEMPERATURE"))
    no_llm: bool = Field(False, validation_alias=_env("STORYGRAPH_NO_LLM"))

    # --- embedded model server (llama.cpp) ---------------------------------------------
    embedded_threads: int = Field(2, ge=1, validation_alias=_env("STORYGRAPH_EMBEDDED_THREADS"))
    embedded_ctx: int = Field(4096, ge=512, validation_alias=_env("STORYGRAPH_EMBEDDED_CTX"))
    embedded_port: int = Field(0, ge=0, validation_alias=_env("STORYGRAPH_EMBEDDED_PORT"))
    embedded_idle_s: float = Field(
        300.0, ge=0, validation_alias=_env("STORYGRAPH_EMBEDDED_IDLE_S")
    )
    model_dir: Path | None = Field(None, validation_alias=_env("STORYGRAPH_MODEL_DIR"))
    encoder_idle_s: float = Field(300.0, ge=0, validation_alias=_env("STORYGRAPH_ENCODER_IDLE_S"))

    # --- ingestion ---------------------------------------------------------------------
    chunk_size: int = Field(0, ge=0, validation_alias=_env("STORYGRAPH_CHUNK_SIZE"))
    chunk_overlap: int = Field(-1, ge=-1, validation_alias=_env("STORYGRAPH_CHUNK_OVERLAP"))
    max_upload_mb: float = Field(10.0, gt=0, validation_alias=_env("STORYGRAPH_MAX_UPLOAD_MB"))
    extractor: ExtractorChoice = Field("auto", validation_alias=_env("STORYGRAPH_EXTRACTOR"))

    # --- retrieval and rerank ----------------------------------------------------------
    retrieval_mode: str = Field(
        "onehop+qtype+reltype+rerank", validation_alias=_env("STORYGRAPH_RETRIEVAL_MODE")
    )
    rerank_top_k: int = Field(15, ge=1, validation_alias=_env("STORYGRAPH_RERANK_TOP_K"))
    rerank_min_score: float = Field(
        1.0, ge=0, le=10, validation_alias=_env("STORYGRAPH_RERANK_MIN_SCORE")
    )
    rerank_strategy: RerankStrategy = Field(
        "auto", validation_alias=_env("STORYGRAPH_RERANK_STRATEGY")
    )
    sentence_sources: int = Field(
        5, ge=0, le=10, validation_alias=_env("STORYGRAPH_SENTENCE_SOURCES")
    )
    answer_choice: bool = Field(False, validation_alias=_env("STORYGRAPH_ANSWER_CHOICE"))
    question_translation: QuestionTranslation = Field(
        "dictionary", validation_alias=_env("STORYGRAPH_QUESTION_TRANSLATION")
    )
    crosslang_answer: CrossLanguageAnswer = Field(
        "sources", validation_alias=_env("STORYGRAPH_CROSSLANG_ANSWER")
    )
    verify: VerifyMode = Field("gate", validation_alias=_env("STORYGRAPH_VERIFY"))

    # --- cost estimate -----------------------------------------------------------------
    price_prompt_per_1k: float = Field(
        0.0, ge=0, validation_alias=_env("STORYGRAPH_PRICE_PROMPT_PER_1K")
    )
    price_completion_per_1k: float = Field(
        0.0, ge=0, validation_alias=_env("STORYGRAPH_PRICE_COMPLETION_PER_1K")
    )

    @field_validator(
        "neo4j_uri", "openai_base_url", "azure_openai_endpoint", "model_dir", mode="before"
    )
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    # --- derived -----------------------------------------------------------------------
    @property
    def uses_neo4j(self) -> bool:
        return bool(self.neo4j_uri)

    def resolved_provider(self) -> LLMProvider:
        """The provider actually used once `auto` is decided."""
        if self.no_llm:
            return "none"
        if self.llm_provider != "auto":
            return self.llm_provider
        if self.azure_openai_endpoint:
            return "azure"
        if self.openai_base_url:
            return "openai_compatible"
        if self.openai_api_key is not None and self.openai_api_key.get_secret_value():
            return "openai"
        return "embedded"

    def effective_chunk_size(self) -> int:
        """Characters per chunk: small for the embedded model, larger for capable ones."""
        if self.chunk_size:
            return self.chunk_size
        return 200 if self.resolved_provider() == "embedded" else 1200

    def effective_chunk_overlap(self) -> int:
        if self.chunk_overlap >= 0:
            return min(self.chunk_overlap, self.effective_chunk_size() // 2)
        return self.effective_chunk_size() // 8

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
