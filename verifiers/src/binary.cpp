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
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      if (e == ENOENT) return Status::NotFound(path + ": no such file");
      return Status::Io(path + ": " + std::strerror(e));
    }
    struct stat st;
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

std::string Demangle(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string out = d;
  std::free(d);
  return out;
}

}  // namespace triage::verifiers::detail
