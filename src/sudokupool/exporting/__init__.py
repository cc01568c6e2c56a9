"""Making exports: what a build orders and the worker processes that fill it, the export writer (an export and
its pack, a record at a time), the build and merge loops, and publishing an export to object storage."""
