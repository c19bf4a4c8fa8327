"""The LLM dependency: forced tool calls to Claude, their token usage and their failures."""

from emergent_memory.llm.client import (
    AnthropicClient,
    LLMError,
    LLMRejected,
    LLMUnavailable,
    MalformedOutput,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "AnthropicClient",
    "LLMError",
    "LLMRejected",
    "LLMUnavailable",
    "MalformedOutput",
    "ToolCall",
    "ToolSpec",
    "Usage",
]
