-- Incidents as triage with schema version 1 wrote them (its own INSERT statements), for the
-- migration test: two incidents, one recurring and resolved, with causes, a symptom, evidence
-- of the first and latest occurrences, a source checkpoint and a heartbeat.
INSERT INTO incidents (id, fingerprint, service, host, source, first_line, last_line, started,
                       ended, top_cause, title, first_seen, last_seen, occurrences, status)
VALUES (1, 'sglang-server|cuda.toolkit_too_old_for_arch{required=12.9,sm=120}', 'sglang-server',
        'ct200', '/var/log/sglang-server.log.1', 24, 58, '2026-11-02T09:24:02',
        '2026-11-02T09:24:09', 'cuda.toolkit_too_old_for_arch',
        'The CUDA toolkit is too old for this GPU', '2026-11-01T08:00:00', '2026-11-02T09:24:02',
        3, 'resolved'),
       (2, 'vllm|python.import_error{module=flash_attn}', 'vllm', 'ct201', '/var/log/vllm.log',
        5, 9, NULL, NULL, 'python.import_error', 'A Python module is missing',
        '2026-11-02T10:00:00', '2026-11-02T10:00:00', 1, 'open');
INSERT INTO hypotheses (id, incident_id, cause, rank, score, band, title, remedy, captures,
                        fingerprint_keys, independent, explained_by)
VALUES (1, 1, 'cuda.toolkit_too_old_for_arch', 1, 0.93, 'likely',
        'The CUDA toolkit is too old for this GPU', 'Install CUDA 12.9 or newer',
        '{"required":"12.9","sm":"120"}', '["sm","required"]', 1, NULL),
       (2, 1, 'lib.arch_unsupported', NULL, 0, '', 'A library has no kernels for sm_120', '',
        '{}', '[]', 0, 1),
       (3, 2, 'python.import_error', 1, 0.88, 'likely', 'A Python module is missing',
        'pip install flash_attn', '{"module":"flash_attn"}', '["module"]', 1, NULL);
INSERT INTO evidence (incident_id, occurrence, cause, symptom, seq, source, line, excerpt)
VALUES (1, 'first', 'cuda.toolkit_too_old_for_arch', NULL, 0, '/var/log/sglang-server.log', 22,
        'RuntimeError: CUDA error: no kernel image is available for execution on the device'),
       (1, 'latest', 'cuda.toolkit_too_old_for_arch', NULL, 0, '/var/log/sglang-server.log.1',
        26, 'RuntimeError: CUDA error: no kernel image is available for execution on the device'),
       (1, 'latest', 'cuda.toolkit_too_old_for_arch', 'lib.arch_unsupported', 1,
        '/var/log/sglang-server.log.1', 30, 'flashinfer: sm_120 is not supported'),
       (2, 'first', 'python.import_error', NULL, 0, '/var/log/vllm.log', 7,
        'ModuleNotFoundError: No module named ''flash_attn''');
INSERT INTO source_checkpoints (path, inode, offset, updated_at)
VALUES ('/var/log/vllm.log', 131077, 90210, '2026-11-02T10:00:05');
INSERT INTO heartbeat (id, pid, started_at, updated_at, counters, last_error)
VALUES (1, 777, '2026-11-01T00:00:00', '2026-11-02T10:00:05', '{"lines":1200,"incidents":2}', '');
