"""Schema version 6: each audit row names the service that wrote it and carries its MAC.

- ``audit.writer``: ``executor`` or ``approval_web`` (`shared.audit_seal.writer_of` its actor).
- ``audit.mac``: HMAC-SHA256 under that service's own key over the row's chained ``hash``
  (`shared.audit_seal.AuditKey.row_mac`), so a store writer that recomputes the hashes after a
  change still cannot make the other service's rows verify.

Rows written before this version have neither (NULL): they stay hash-chained, and the first
signed row after them pins their last hash. Neither column is in the row's hash: the MAC covers
the hash, and the writer is the actor's.
"""

SQL = """
ALTER TABLE audit ADD COLUMN writer TEXT;
ALTER TABLE audit ADD COLUMN mac TEXT;
"""
