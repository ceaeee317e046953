// Reading ELF shared objects without loading them: the entries of their .nv_fatbin sections
// (kind and architecture, straight from the entry headers, so compressed payloads need no
// decompression), their dynamic symbols, whether this process's dynamic loader would take them
// (from the ELF header alone), and where the loader would find a library by name (ld.so.cache,
// LD_LIBRARY_PATH, the default folders). Pure functions of the file's bytes; bad input is
// Corrupt, never a crash. Files are opened only when they are regular files (never a device or a
// FIFO a log names), read with open/read or a read-only mapping, and never dlopen'd: a log is
// untrusted input, and loading a library runs its constructors.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "triage/status.h"

namespace triage::verifiers::detail {

struct FatbinEntry {
  enum class Kind { kPtx, kSass };
  Kind kind = Kind::kSass;
  int arch = 0;  // 90 for sm_90 / compute_90
  uint64_t flags = 0;
  uint64_t payload_size = 0;       // as stored (compressed size when compressed)
  uint64_t decompressed_size = 0;  // 0 when the header does not say
  bool compressed = false;
};

// Every entry of every fatbin container in `bytes` (containers back to back, as in an
// .nv_fatbin section or a file from `nvcc -fatbin`).
Result<std::vector<FatbinEntry>> ParseFatbin(std::span<const unsigned char> bytes);

// The entries of the .nv_fatbin section(s) of an ELF file; an ELF without one gives an empty
// list; a file that is not a 64-bit little-endian ELF is InvalidInput.
Result<std::vector<FatbinEntry>> ReadElfFatbin(const std::string& path);

// Sorted, unique architectures of the entries of one kind.
std::vector<int> Architectures(const std::vector<FatbinEntry>& entries, FatbinEntry::Kind kind);

struct DynamicSymbols {
  std::vector<std::string> defined;    // exported: global or weak, with a section
  std::vector<std::string> undefined;  // what it needs from others
  std::vector<std::string> needed;     // DT_NEEDED
  std::vector<std::string> runpath;    // DT_RUNPATH or DT_RPATH, split at ':'
  std::string soname;
};
Result<DynamicSymbols> ReadDynamicSymbols(const std::string& path);

// abi::__cxa_demangle of a mangled C++ name, or the name itself.
std::string Demangle(const std::string& name);

// --- What the dynamic loader would take, without loading -------------------------------------

// How a file fits this process's dynamic loader, judged from its ELF header as glibc's loader
// judges a candidate (open_verify in elf/dl-load.c).
enum class ElfFit {
  kLoadable,      // ELF, this build's class (ELFCLASS64), byte order and machine (EM_X86_64 on
                  // x86-64), a valid ident and program-header size, ET_DYN
  kOtherMachine,  // an ELF of another class or machine: the loader passes over it and searches on
  kUnloadable,    // anything else (not ELF, too short, bad ident, an executable): the loader stops
                  // at it with an error
};
struct ElfHeaderFit {
  ElfFit fit = ElfFit::kUnloadable;
  std::string why;  // for the last two: "wrong ELF class: ELFCLASS32", "invalid ELF header", ...
};
// Judges the first bytes of a file (at least sizeof(Elf64_Ehdr) for a loadable answer).
ElfHeaderFit JudgeElfHeader(std::span<const unsigned char> bytes);
// Reads `path`'s ELF header with open/read. NotFound when there is no such file (or a folder on
// the way is not a folder); Io with the errno text when it cannot be opened or read ("Permission
// denied"). Something that is not a regular file (a folder, a device, a FIFO) is not opened and
// is kUnloadable.
Result<ElfHeaderFit> ReadElfHeader(const std::string& path);

// One entry of /etc/ld.so.cache: a soname and the file ldconfig found for it.
struct LdCacheEntry {
  std::string name;    // the key: "libm.so.6"
  std::string path;    // "/lib/x86_64-linux-gnu/libm.so.6"
  int32_t flags = 0;   // FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 (0x0303) and kin
  uint64_t hwcap = 0;  // nonzero: a hardware-capability variant (glibc-hwcaps subfolder)
};
// The entries of an ld.so.cache image, in file order: the new format ("glibc-ld.so.cache1.1",
// string offsets from the start of its header), alone or after the old one ("ld.so-1.7.0",
// string offsets from the end of its entries), or the old format alone. Every offset is checked
// against the image: a bad image is Corrupt.
Result<std::vector<LdCacheEntry>> ParseLdCache(std::span<const unsigned char> bytes);
// Reads a cache file (plain open/read, at most 64 MiB) and parses it. NotFound when absent.
Result<std::vector<LdCacheEntry>> ReadLdCache(const std::string& path);
// Whether an entry's flags are ones this build's loader accepts (_dl_cache_check_flags: libc6,
// with the 64-bit ABI bits on x86-64 and aarch64; FLAG_ELF alone).
bool LdCacheFlagsFit(int32_t flags);

// The default folders the loader searches last, for this build's machine (multiarch folders
// first, then lib64, then lib).
std::vector<std::string> DefaultLibraryDirs();

// Where the loader looks for a bare library name (no '/').
struct LibrarySearch {
  std::vector<std::string> first_dirs;         // an object's own run path, searched first
  std::optional<std::string> ld_library_path;  // LD_LIBRARY_PATH as set; nullopt: unset
  std::string cache = "/etc/ld.so.cache";
  std::vector<std::string> default_dirs = DefaultLibraryDirs();
};
// This process's search: LD_LIBRARY_PATH from its environment, the system cache and folders.
LibrarySearch LibrarySearchFromEnvironment();

struct LibraryResolution {
  enum class Outcome {
    kFound,        // `path` is what the loader would load
    kNotFound,     // nowhere it looks holds a loadable file of that name
    kLoaderError,  // the loader would stop at `path` with `error` (a file it cannot take)
  };
  Outcome outcome = Outcome::kNotFound;
  std::string path;   // absolute where the search folder is (an empty or relative
                      // LD_LIBRARY_PATH entry is taken from the current folder, as ld.so does)
  std::string where;  // how: "LD_LIBRARY_PATH entry /x", "the current folder /y, an empty
                      // LD_LIBRARY_PATH entry", "/etc/ld.so.cache", "default folder /usr/lib"
  std::string error;  // kLoaderError: why
  std::vector<std::string> looked;       // every place looked, in order: as `where` says it,
                                         // a default folder by its path alone
  std::vector<std::string> passed_over;  // "FILE (wrong ELF class: ELFCLASS32)": the loader
                                         // skips these and searches on
  std::vector<std::string> unreadable;   // "FILE: Permission denied": exist, could not be read
};
// Resolves `name` as glibc's loader would for a program with no run path of its own: `first_dirs`,
// then each LD_LIBRARY_PATH entry (':' or ';' separated; an empty entry is the current folder;
// entries with $ORIGIN, $LIB or $PLATFORM are not expanded and are listed as skipped), then the
// cache's entry for the name (a plain entry before a hwcap variant), then the default folders.
// Each candidate is judged by ReadElfHeader; nothing is loaded. `name` must not contain '/'.
LibraryResolution ResolveLibraryName(const std::string& name, const LibrarySearch& search);

}  // namespace triage::verifiers::detail
