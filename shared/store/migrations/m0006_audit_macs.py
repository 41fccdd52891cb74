"""Schema version 6: each audit row names the service that wrote it and carries its MAC; the
newest row of a kind is found without a scan.

- ``audit.writer``: ``executor`` or ``approval_web`` (`shared.store.audit_seal.writer_of` its actor).
- ``audit.mac``: HMAC-SHA256 under that service's own key over the row's chained ``hash``
  (`shared.store.audit_seal.AuditKey.row_mac`), so a store writer that recomputes the hashes after a
  change still cannot make the other service's rows verify.
- ``audit_by_kind``: the kill switch's newest request and seal are read before every write
  and on every page view (`shared.store.approvals.kill_switch`,
  `services.executor.kill_switch`); without it each read walks the whole log.

Rows written before this version have neither (NULL): they stay hash-chained, and the first
signed row after them pins their last hash. Neither column is in the row's hash: the MAC covers
the hash, and the writer is the actor's.
"""

SQL = """
ALTER TABLE audit ADD COLUMN writer TEXT;
ALTER TABLE audit ADD COLUMN mac TEXT;
CREATE INDEX audit_by_kind ON audit (kind, seq);
"""
