// The bodies of the ingest fuzz targets, as plain functions: the libFuzzer wrappers
// (*_fuzz.cpp) call them, and so does the GoogleTest suite that replays every seed and
// regression input (tests/ingest/fuzz_replay_test.cpp). Each body checks the stage's invariants
// and traps when one does not hold.
#pragma once

#include <cstddef>
#include <cstdint>

namespace triage::fuzz {

// Bytes in arbitrary chunks through the framer with a small cap: numbering, offsets, lengths.
void FramerBody(const uint8_t* data, size_t size);
// The input as one line through the decoder (JSON or plain): display is valid UTF-8, fields sane.
void JsonDecoderBody(const uint8_t* data, size_t size);
// The input through the whole EventStream: events in order, lines accounted for, JSON valid.
void AssemblerBody(const uint8_t* data, size_t size);
// The input through TerminalText: nothing a terminal acts on is left, valid UTF-8, a fixed
// point, and text with nothing to escape is kept as it is.
void TerminalTextBody(const uint8_t* data, size_t size);
// The input (first byte: the read sizes) as gzip through GzipSourceOf, against zlib inflating it
// in one piece: the same bytes, the same member and trailing-garbage rules, an error exactly
// when zlib finds one and after every byte inflated before it.
void GzipSourceBody(const uint8_t* data, size_t size);
// The input as a Flight Recorder dump (a pickle of the data-only subset): read or refused, never
// a crash or a hang; a dump read once reads the same again.
void FlightRecorderBody(const uint8_t* data, size_t size);

}  // namespace triage::fuzz
