// ELF and fatbin reading: see detail/binary.h.
#include "triage/verifiers/detail/binary.h"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

namespace triage::verifiers::detail {

namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint32_t kZstdMagic = 0xFD2FB528u;
constexpr uint64_t kFlagCompressed = 0x2000u;

template <typename T>
T Load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A read-only mapping of a whole file.
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path) {
    // A path from a log may name a device or a FIFO: opening some devices acts (a watchdog arms,
    // a tape rewinds) and a FIFO blocks, so only a regular file is opened, without blocking.
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      int e = errno;
      if (e == ENOENT || e == ENOTDIR) return Status::NotFound(path + ": no such file");
      return Status::Io(path + ": " + std::strerror(e));
    }
    if (!S_ISREG(st.st_mode)) return Status::InvalidInput(path + ": not a regular file");
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
      int e = errno;
      if (e == ENOENT) return Status::NotFound(path + ": no such file");
      return Status::Io(path + ": " + std::strerror(e));
    }
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return Status::InvalidInput(path + ": not a regular file");
    }
    MappedFile m;
    m.size_ = static_cast<size_t>(st.st_size);
    if (m.size_ > 0) {
      void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        int e = errno;
        ::close(fd);
        return Status::Io(path + ": mmap: " + std::strerror(e));
      }
      m.data_ = static_cast<const unsigned char*>(p);
    }
    ::close(fd);
    return m;
  }
  MappedFile() = default;
  MappedFile(MappedFile&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  std::span<const unsigned char> bytes() const { return {data_, size_}; }

 private:
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint64_t entsize = 0;
};

Result<std::vector<Section>> Sections(std::span<const unsigned char> f, const std::string& path) {
  if (f.size() < sizeof(Elf64_Ehdr) || std::memcmp(f.data(), ELFMAG, SELFMAG) != 0)
    return Status::InvalidInput(path + ": not an ELF file");
  if (f[EI_CLASS] != ELFCLASS64 || f[EI_DATA] != ELFDATA2LSB)
    return Status::InvalidInput(path + ": not a 64-bit little-endian ELF file");
  auto eh = Load<Elf64_Ehdr>(f.data());
  if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr)) return std::vector<Section>{};
  uint64_t count = eh.e_shnum;
  if (eh.e_shoff > f.size() || count > (f.size() - eh.e_shoff) / sizeof(Elf64_Shdr))
    return Status::Corrupt(path + ": section headers past the end of the file");
  std::vector<Elf64_Shdr> raw(count);
  for (uint64_t i = 0; i < count; ++i)
    raw[i] = Load<Elf64_Shdr>(f.data() + eh.e_shoff + i * sizeof(Elf64_Shdr));
  std::vector<Section> out;
  const Elf64_Shdr* strtab = eh.e_shstrndx < count ? &raw[eh.e_shstrndx] : nullptr;
  for (const auto& s : raw) {
    Section sec;
    sec.type = s.sh_type;
    sec.offset = s.sh_offset;
    sec.size = s.sh_type == SHT_NOBITS ? 0 : s.sh_size;
    sec.link = s.sh_link;
    sec.entsize = s.sh_entsize;
    if (sec.offset > f.size() || sec.size > f.size() - sec.offset)
      return Status::Corrupt(path + ": a section lies past the end of the file");
    if (strtab && strtab->sh_offset < f.size() && s.sh_name < strtab->sh_size &&
        strtab->sh_offset + s.sh_name < f.size()) {
      const char* n = reinterpret_cast<const char*>(f.data() + strtab->sh_offset + s.sh_name);
      size_t max = f.size() - (strtab->sh_offset + s.sh_name);
      sec.name.assign(n, strnlen(n, max));
    }
    out.push_back(std::move(sec));
  }
  return out;
}

std::string CString(std::span<const unsigned char> f, const Section& strtab, uint64_t index) {
  if (index >= strtab.size) return {};
  const char* p = reinterpret_cast<const char*>(f.data() + strtab.offset + index);
  return std::string(p, strnlen(p, strtab.size - index));
}

}  // namespace

Result<std::vector<FatbinEntry>> ParseFatbin(std::span<const unsigned char> bytes) {
  std::vector<FatbinEntry> entries;
  size_t pos = 0;
  while (pos + 16 <= bytes.size()) {
    uint32_t magic = Load<uint32_t>(bytes.data() + pos);
    if (magic != kFatbinMagic) {
      // Containers in a section are 8-byte aligned; zero padding may separate them.
      if (magic == 0) {
        pos += 8;
        continue;
      }
      return Status::Corrupt("fatbin: bad magic at offset " + std::to_string(pos));
    }
    uint16_t header_size = Load<uint16_t>(bytes.data() + pos + 6);
    uint64_t body_size = Load<uint64_t>(bytes.data() + pos + 8);
    if (header_size < 16 || body_size > bytes.size() - pos - header_size)
      return Status::Corrupt("fatbin: container at offset " + std::to_string(pos) +
                             " runs past the end");
    size_t entry = pos + header_size;
    const size_t end = pos + header_size + body_size;
    while (entry + 64 <= end) {
      const unsigned char* e = bytes.data() + entry;
      uint16_t kind = Load<uint16_t>(e + 0);
      uint32_t entry_header = Load<uint32_t>(e + 4);
      uint64_t payload = Load<uint64_t>(e + 8);
      if (entry_header < 64 || entry_header > end - entry ||
          payload > end - entry - entry_header)
        return Status::Corrupt("fatbin: entry at offset " + std::to_string(entry) +
                               " runs past its container");
      FatbinEntry fe;
      fe.arch = static_cast<int>(Load<uint32_t>(e + 28));
      fe.flags = Load<uint64_t>(e + 40);
      fe.payload_size = payload;
      fe.decompressed_size = Load<uint64_t>(e + 56);
      bool zstd = payload >= 4 && Load<uint32_t>(e + entry_header) == kZstdMagic;
      fe.compressed = (fe.flags & kFlagCompressed) != 0 || zstd;
      if (kind == 1) {
        fe.kind = FatbinEntry::Kind::kPtx;
        entries.push_back(fe);
      } else if (kind == 2 || kind == 0x10) {
        fe.kind = FatbinEntry::Kind::kSass;
        entries.push_back(fe);
      }
      entry += entry_header + payload;
    }
    pos = end;
    pos = (pos + 7) & ~size_t{7};
  }
  return entries;
}

Result<std::vector<FatbinEntry>> ReadElfFatbin(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  auto f = file->bytes();
  auto sections = Sections(f, path);
  if (!sections.ok()) return sections.status();
  std::vector<FatbinEntry> all;
  for (const auto& s : *sections) {
    if (s.name != ".nv_fatbin" && s.name != "__nv_relfatbin") continue;
    auto entries = ParseFatbin(f.subspan(s.offset, s.size));
    if (!entries.ok()) return entries.status().Annotate(path + ": " + s.name);
    all.insert(all.end(), entries->begin(), entries->end());
  }
  return all;
}

std::vector<int> Architectures(const std::vector<FatbinEntry>& entries, FatbinEntry::Kind kind) {
  std::set<int> archs;
  for (const auto& e : entries)
    if (e.kind == kind) archs.insert(e.arch);
  return {archs.begin(), archs.end()};
}

Result<DynamicSymbols> ReadDynamicSymbols(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  auto f = file->bytes();
  auto sections = Sections(f, path);
  if (!sections.ok()) return sections.status();
  DynamicSymbols out;
  const auto& secs = *sections;
  for (const auto& s : secs) {
    if (s.type == SHT_DYNSYM && s.link < secs.size()) {
      const Section& strtab = secs[s.link];
      size_t n = s.size / sizeof(Elf64_Sym);
      for (size_t i = 1; i < n; ++i) {
        auto sym = Load<Elf64_Sym>(f.data() + s.offset + i * sizeof(Elf64_Sym));
        std::string name = CString(f, strtab, sym.st_name);
        if (name.empty()) continue;
        unsigned bind = ELF64_ST_BIND(sym.st_info);
        if (sym.st_shndx == SHN_UNDEF)
          out.undefined.push_back(std::move(name));
        else if (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE)
          out.defined.push_back(std::move(name));
      }
    }
    if (s.type == SHT_DYNAMIC && s.link < secs.size()) {
      const Section& strtab = secs[s.link];
      size_t n = s.size / sizeof(Elf64_Dyn);
      for (size_t i = 0; i < n; ++i) {
        auto d = Load<Elf64_Dyn>(f.data() + s.offset + i * sizeof(Elf64_Dyn));
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED) out.needed.push_back(CString(f, strtab, d.d_un.d_val));
        if (d.d_tag == DT_SONAME) out.soname = CString(f, strtab, d.d_un.d_val);
        if (d.d_tag == DT_RUNPATH || d.d_tag == DT_RPATH) {
          std::string rp = CString(f, strtab, d.d_un.d_val);
          size_t start = 0;
          while (start <= rp.size()) {
            size_t colon = rp.find(':', start);
            if (colon == std::string::npos) colon = rp.size();
            if (colon > start) out.runpath.push_back(rp.substr(start, colon - start));
            start = colon + 1;
          }
        }
      }
    }
  }
  std::sort(out.defined.begin(), out.defined.end());
  return out;
}

// --- ELF headers, ld.so.cache, the loader's search ---

namespace {

// This build's machine, as the loader checks it (elf_machine_matches_host).
#if defined(__x86_64__)
constexpr uint16_t kThisMachine = EM_X86_64;
constexpr const char* kMultiarch = "x86_64-linux-gnu";
constexpr int32_t kCacheAbiFlags = 0x0300;  // FLAG_X8664_LIB64
#elif defined(__aarch64__)
constexpr uint16_t kThisMachine = EM_AARCH64;
constexpr const char* kMultiarch = "aarch64-linux-gnu";
constexpr int32_t kCacheAbiFlags = 0x0a00;  // FLAG_AARCH64_LIB64
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr uint16_t kThisMachine = EM_PPC64;
constexpr const char* kMultiarch = "powerpc64le-linux-gnu";
constexpr int32_t kCacheAbiFlags = -1;  // not pinned: the ELF header decides
#else
#error "triage's loader model knows x86-64, aarch64 and ppc64le; add this machine here"
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kThisData = ELFDATA2LSB;
#else
constexpr unsigned char kThisData = ELFDATA2MSB;
#endif

constexpr char kCacheOldMagic[] = "ld.so-1.7.0";             // struct cache_file
constexpr char kCacheNewMagic[] = "glibc-ld.so.cache1.1";    // struct cache_file_new
constexpr size_t kCacheOldHeader = 16;                       // magic[11], pad, nlibs
constexpr size_t kCacheOldEntry = 12;                        // flags, key, value
constexpr size_t kCacheNewHeader = 48;                       // see ParseLdCache
constexpr size_t kCacheNewEntry = 24;                        // flags, key, value, osversion, hwcap
constexpr size_t kCacheMaxSize = size_t{64} << 20;

// The NUL-terminated string at `base + offset` of the image, or nullopt when it runs off it.
std::optional<std::string> CacheString(std::span<const unsigned char> f, size_t base,
                                       uint64_t offset) {
  if (base > f.size() || offset >= f.size() - base) return std::nullopt;
  const char* p = reinterpret_cast<const char*>(f.data() + base + offset);
  size_t max = f.size() - base - offset;
  size_t n = strnlen(p, max);
  if (n == max) return std::nullopt;
  return std::string(p, n);
}

Result<std::vector<LdCacheEntry>> CacheEntries(std::span<const unsigned char> f, size_t entries,
                                               uint64_t count, size_t entry_size,
                                               size_t strings) {
  if (entries > f.size() || count > (f.size() - entries) / entry_size)
    return Status::Corrupt("ld.so.cache: entries past the end of the file");
  std::vector<LdCacheEntry> out;
  out.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned char* e = f.data() + entries + i * entry_size;
    LdCacheEntry entry;
    entry.flags = Load<int32_t>(e);
    auto key = CacheString(f, strings, Load<uint32_t>(e + 4));
    auto value = CacheString(f, strings, Load<uint32_t>(e + 8));
    if (!key || !value)
      return Status::Corrupt("ld.so.cache: entry " + std::to_string(i) + " names a string past the end");
    entry.name = std::move(*key);
    entry.path = std::move(*value);
    if (entry_size == kCacheNewEntry) entry.hwcap = Load<uint64_t>(e + 16);
    out.push_back(std::move(entry));
  }
  return out;
}

std::string MachineName(uint16_t m) {
  switch (m) {
    case EM_X86_64: return "x86-64";
    case EM_386: return "i386";
    case EM_AARCH64: return "aarch64";
    case EM_ARM: return "arm";
    case EM_PPC64: return "ppc64";
    case EM_RISCV: return "riscv";
    case EM_S390: return "s390";
    default: return "machine " + std::to_string(m);
  }
}

std::string CurrentFolder() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? std::string(buf) : std::string(".");
}

}  // namespace

ElfHeaderFit JudgeElfHeader(std::span<const unsigned char> f) {
  // The order of glibc's open_verify: what it passes over (another class or machine) and what
  // stops it (everything else that is wrong).
  auto stop = [](std::string why) { return ElfHeaderFit{ElfFit::kUnloadable, std::move(why)}; };
  if (f.size() < EI_NIDENT || std::memcmp(f.data(), ELFMAG, SELFMAG) != 0)
    return stop(f.size() < SELFMAG ? "file too short" : "invalid ELF header");
  if (f[EI_CLASS] != ELFCLASS64)
    return {ElfFit::kOtherMachine,
            std::string("wrong ELF class: ") + (f[EI_CLASS] == ELFCLASS32 ? "ELFCLASS32" : "unknown")};
  if (f.size() < sizeof(Elf64_Ehdr)) return stop("file too short");
  if (f[EI_DATA] != kThisData)
    return stop(kThisData == ELFDATA2LSB ? "ELF file data encoding not little-endian"
                                         : "ELF file data encoding not big-endian");
  if (f[EI_VERSION] != EV_CURRENT) return stop("ELF file version ident does not match current one");
  if (f[EI_OSABI] != ELFOSABI_SYSV && f[EI_OSABI] != ELFOSABI_GNU) return stop("ELF file OS ABI invalid");
  if (f[EI_ABIVERSION] != 0 && f[EI_OSABI] != ELFOSABI_GNU) return stop("ELF file ABI version invalid");
  auto eh = Load<Elf64_Ehdr>(f.data());
  if (eh.e_version != EV_CURRENT) return stop("ELF file version does not match current one");
  if (eh.e_machine != kThisMachine)
    return {ElfFit::kOtherMachine,
            "wrong machine: " + MachineName(eh.e_machine) + ", not " + MachineName(kThisMachine)};
  if (eh.e_type == ET_EXEC) return stop("cannot dynamically load executable");
  if (eh.e_type != ET_DYN) return stop("only ET_DYN and ET_EXEC can be loaded");
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return stop("ELF file's phentsize not the expected size");
  return {ElfFit::kLoadable, {}};
}

Result<ElfHeaderFit> ReadElfHeader(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return Status::NotFound(path + ": no such file");
    return Status::Io(path + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) return ElfHeaderFit{ElfFit::kUnloadable, "not a regular file"};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::Io(path + ": " + std::strerror(e));
  }
  unsigned char buf[sizeof(Elf64_Ehdr)];
  size_t got = 0;
  int read_errno = 0;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return ElfHeaderFit{ElfFit::kUnloadable, "not a regular file"};
  }
  while (got < sizeof buf) {
    ssize_t n = ::read(fd, buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_errno = errno;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (read_errno != 0) return Status::Io(path + ": " + std::strerror(read_errno));
  return JudgeElfHeader({buf, got});
}

Result<std::vector<LdCacheEntry>> ParseLdCache(std::span<const unsigned char> f) {
  const size_t old_len = sizeof kCacheOldMagic - 1;
  const size_t new_len = sizeof kCacheNewMagic - 1;
  size_t new_at = 0;
  if (f.size() >= kCacheOldHeader && std::memcmp(f.data(), kCacheOldMagic, old_len) == 0) {
    uint64_t count = Load<uint32_t>(f.data() + 12);
    if (count > (f.size() - kCacheOldHeader) / kCacheOldEntry)
      return Status::Corrupt("ld.so.cache: old-format entries past the end of the file");
    const size_t end = kCacheOldHeader + count * kCacheOldEntry;
    // The new format follows, aligned as struct cache_file_new (8); its strings are offsets
    // from its own header. Without it, the old strings follow the old entries.
    new_at = (end + 7) & ~size_t{7};
    if (new_at + kCacheNewHeader > f.size() ||
        std::memcmp(f.data() + new_at, kCacheNewMagic, new_len) != 0)
      return CacheEntries(f, kCacheOldHeader, count, kCacheOldEntry, end);
  } else if (f.size() < kCacheNewHeader || std::memcmp(f.data(), kCacheNewMagic, new_len) != 0) {
    return Status::Corrupt("ld.so.cache: neither \"" + std::string(kCacheNewMagic) + "\" nor \"" +
                           kCacheOldMagic + "\" format");
  }
  // struct cache_file_new: magic[17], version[3], nlibs, len_strings, flags (byte order in its
  // low two bits: 2 little, 3 big, 0 unrecorded), padding[3], extension_offset, unused[3].
  const unsigned char* h = f.data() + new_at;
  const unsigned order = h[28] & 3u;
  const unsigned ours = kThisData == ELFDATA2LSB ? 2u : 3u;
  if (order != 0 && order != ours) return Status::Corrupt("ld.so.cache: written for the other byte order");
  return CacheEntries(f, new_at + kCacheNewHeader, Load<uint32_t>(h + 20), kCacheNewEntry, new_at);
}

Result<std::vector<LdCacheEntry>> ReadLdCache(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return Status::NotFound(path + ": no such file");
    return Status::Io(path + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidInput(path + ": not a regular file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return Status::Io(path + ": " + std::strerror(errno));
  std::vector<unsigned char> bytes;
  unsigned char buf[65536];
  int read_errno = 0;
  while (bytes.size() <= kCacheMaxSize) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_errno = errno;
    if (n <= 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  ::close(fd);
  if (read_errno != 0) return Status::Io(path + ": " + std::strerror(read_errno));
  if (bytes.size() > kCacheMaxSize) return Status::Corrupt(path + ": larger than 64 MiB");
  auto entries = ParseLdCache(bytes);
  if (!entries.ok()) return entries.status().Annotate(path);
  return entries;
}

bool LdCacheFlagsFit(int32_t flags) {
  constexpr int32_t kElf = 0x0001, kElfLibc6 = 0x0003;
  if (flags == kElf) return true;
  if (kCacheAbiFlags < 0) return (flags & 0xff) == kElfLibc6;
  return flags == (kElfLibc6 | kCacheAbiFlags);
}

std::vector<std::string> DefaultLibraryDirs() {
  return {std::string("/lib/") + kMultiarch, std::string("/usr/lib/") + kMultiarch, "/lib64",
          "/usr/lib64", "/lib", "/usr/lib"};
}

LibrarySearch LibrarySearchFromEnvironment() {
  LibrarySearch s;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) s.ld_library_path = llp;
  return s;
}

LibraryResolution ResolveLibraryName(const std::string& name, const LibrarySearch& search) {
  LibraryResolution r;
  const std::string cwd = CurrentFolder();
  // Judges one candidate; true when the search ends there (found, or the loader would stop).
  auto consider = [&](const std::string& file, const std::string& where) {
    auto header = ReadElfHeader(file);
    if (!header.ok()) {
      if (header.status().kind() != Status::Kind::kNotFound) r.unreadable.push_back(header.status().message());
      return false;
    }
    if (header->fit == ElfFit::kOtherMachine) {
      r.passed_over.push_back(file + " (" + header->why + ")");
      return false;
    }
    r.outcome = header->fit == ElfFit::kLoadable ? LibraryResolution::Outcome::kFound
                                                 : LibraryResolution::Outcome::kLoaderError;
    r.path = file;
    r.where = where;
    r.error = header->why;
    return true;
  };
  auto in_dir = [&](const std::string& dir, const std::string& where, const std::string& looked) {
    r.looked.push_back(looked);
    std::string base = dir.empty() ? cwd : dir[0] == '/' ? dir : cwd + "/" + dir;
    return consider(base + "/" + name, where);
  };

  for (const auto& d : search.first_dirs)
    if (in_dir(d, "run path " + d, "run path " + d)) return r;
  // ld.so splits at ':' and ';', and takes an empty entry as the current folder ("./"), resolved
  // when it opens the file. An unset or empty variable adds nothing.
  if (search.ld_library_path && !search.ld_library_path->empty()) {
    const std::string& llp = *search.ld_library_path;
    size_t start = 0;
    while (start <= llp.size()) {
      size_t end = std::min(llp.find_first_of(":;", start), llp.size());
      std::string entry = llp.substr(start, end - start);
      start = end + 1;
      if (entry.find('$') != std::string::npos) {
        // $ORIGIN is the service's program folder, which this process does not know.
        r.looked.push_back("LD_LIBRARY_PATH entry " + entry + " (not expanded, skipped)");
        continue;
      }
      std::string where = entry.empty() ? "the current folder " + cwd + ", an empty LD_LIBRARY_PATH entry"
                                        : "LD_LIBRARY_PATH entry " + entry;
      if (in_dir(entry, where, where)) return r;
    }
  }
  if (!search.cache.empty()) {
    auto cache = ReadLdCache(search.cache);
    if (!cache.ok()) {
      r.looked.push_back(search.cache + " (" + cache.status().message() + ")");
    } else {
      r.looked.push_back(search.cache);
      // The loader takes one entry for the name: a hwcap variant only on a CPU that has the
      // capability, so a plain entry is the one to judge when there is one.
      const LdCacheEntry* best = nullptr;
      for (const auto& e : *cache)
        if (e.name == name && LdCacheFlagsFit(e.flags) && (!best || (best->hwcap != 0 && e.hwcap == 0)))
          best = &e;
      if (best && consider(best->path, search.cache)) return r;
    }
  }
  for (const auto& d : search.default_dirs)
    if (in_dir(d, "default folder " + d, d)) return r;
  return r;
}

std::string Demangle(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string out = d;
  std::free(d);
  return out;
}

}  // namespace triage::verifiers::detail
