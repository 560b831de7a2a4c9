"""What model-assisted memory keeps beside the memories: links, the job queue, the call ledger."""
