"""Who is asking: the principal, API tokens and the local identity of a single-user install."""
