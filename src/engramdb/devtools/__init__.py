"""Tools for working on EngramDB itself (code and docs generated from the operation registry)."""
