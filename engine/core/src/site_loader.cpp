// The error-site tables in a rule set (sites.h): loading their headers with the rules, each
// key's signature and cause, and their rows on first use.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "rules_internal.h"

namespace triage::core {

namespace fs = std::filesystem;

// "site.<project>.<cause with '.' as '_'>[.hint]": the signature of a table's rows with one key.
std::string detail::SiteSignatureId(const std::string& project, std::string_view key) {
  const auto [cause, hint] = SplitSiteSignatureKey(key);
  std::string name(cause);
  std::replace(name.begin(), name.end(), '.', '_');
  return "site." + project + "." + name + (hint ? ".hint" : "");
}

const std::vector<SiteTable>& RuleSet::site_tables() const {
  std::call_once(site_rows_once_, [this] { ReadSiteRows(); });
  return site_tables_;
}

int RuleSet::SiteSignature(size_t table, size_t row) const {
  site_tables();
  if (table >= site_signatures_.size() || row >= site_signatures_[table].size()) return -1;
  return site_signatures_[table][row];
}

// The rows of the tables whose header named their signatures (the others were read whole at
// loading), and each row's signature: that of its table and key, which loading made.
void RuleSet::ReadSiteRows() const {
  site_signatures_.assign(site_tables_.size(), {});
  for (size_t t = 0; t < site_tables_.size(); ++t) {
    SiteTable& table = site_tables_[t];
    if (table.rows.empty()) {
      std::shared_ptr<const void> owner;
      std::string_view bytes;
      if (!MapSiteFile(table.file, owner, bytes)) {
        site_faults_.push_back({table.file, 0, "cannot read"});
        continue;
      }
      std::vector<std::pair<int, std::string>> faults;
      SiteTable whole = ParseSiteTable(table.file, std::move(owner), bytes, faults);
      for (auto& [line, msg] : faults) site_faults_.push_back({table.file, line, std::move(msg)});
      table.rows = std::move(whole.rows);
      table.text = std::move(whole.text);
      table.unescaped = std::move(whole.unescaped);
      table.all_pieces = std::move(whole.all_pieces);
    }
    std::vector<int>& sig = site_signatures_[t];
    sig.assign(table.rows.size(), -1);
    // A table's rows share a few keys: each key's signature is looked up once (-1: a key that
    // reports nothing, -2: one the header's '# causes:' did not name).
    std::map<std::pair<std::string_view, bool>, int> known;
    for (size_t r = 0; r < table.rows.size(); ++r) {
      const SiteRow& row = table.rows[r];
      auto [it, fresh] = known.try_emplace({row.cause, row.hint}, -1);
      if (fresh) {
        const std::string key = SiteSignatureKey(row);
        if (!key.empty()) {
          const int found = FindSignature(detail::SiteSignatureId(table.project, key));
          it->second = found >= 0 ? found : -2;
        }
      }
      if (it->second == -2) {
        site_faults_.push_back({table.file, row.line,
                                "the header's '# causes:' does not name '" + SiteSignatureKey(row) + "'"});
        continue;
      }
      sig[r] = it->second;
    }
  }
}


// A folder of error-site tables (sites.h): its remedies.toml, then every *.tsv in name order. A
// project's table may be split over several files of one folder (a large one is); a later
// folder's tables of a project replace those of the earlier folders.
void RuleSetBuilder::LoadSites(const std::string& folder) {
  std::error_code ec;
  const std::string remedies = (fs::path(folder) / "remedies.toml").string();
  if (fs::exists(remedies, ec)) {
    toml::parse_result res = toml::parse_file(remedies);
    if (!res) {
      Fault(remedies, int(res.error().source().begin.line),
            "TOML syntax error: " + std::string(res.error().description()));
    } else if (const toml::table* t = res.table()["remedies"].as_table()) {
      for (const auto& [k, v] : *t) {
        if (auto text = v.value<std::string>()) site_remedies_[std::string(k.str())] = *text;
        else Fault(remedies, LineOf(v), "remedy of '" + std::string(k.str()) + "' is not a string");
      }
      site_remedies_file_ = remedies;
    } else {
      Fault(remedies, 1, "no [remedies] table");
    }
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == ".tsv" && e.is_regular_file(ec)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  auto& tables = set_->site_tables_;
  std::set<std::string> projects_here;
  for (const auto& f : files) {
    // The header only, where it names the table's signatures; the rows are read on first use.
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      Fault(f, 0, "cannot read");
      continue;
    }
    std::string head, line;
    while (std::getline(in, line) && (line.empty() || line[0] == '#')) head += line + "\n";
    std::vector<std::pair<int, std::string>> faults;
    SiteTable table = ParseSiteTable(f, head, faults, true);
    if (table.signature_keys.empty()) {
      // No `# causes:` line: the rows are read now, to learn them.
      std::shared_ptr<const void> owner;
      std::string_view bytes;
      if (!MapSiteFile(f, owner, bytes)) {
        Fault(f, 0, "cannot read");
        continue;
      }
      faults.clear();
      table = ParseSiteTable(f, std::move(owner), bytes, faults);
      std::set<std::string> keys;
      for (const auto& r : table.rows)
        if (std::string k = SiteSignatureKey(r); !k.empty()) keys.insert(k);
      table.signature_keys.assign(keys.begin(), keys.end());
    }
    for (auto& [fl, msg] : faults) Fault(f, fl, std::move(msg));
    if (table.project.empty()) continue;
    if (projects_here.insert(table.project).second)
      std::erase_if(tables, [&](const SiteTable& t) { return t.project == table.project; });
    tables.push_back(std::move(table));
    if (std::find(set_->files_.begin(), set_->files_.end(), f) == set_->files_.end())
      set_->files_.push_back(f);
  }
}

// Each key of a project's tables (a taxonomy id or `unclassified`, `:hint` for hint rows) becomes
// one signature that their rows with that key report, and each classified id one cause
// `<id>.src_<project>` that gives way to a written cause of its id, titled by the program's own
// message and naming where it comes from.
void RuleSetBuilder::AddSiteTables() {
  RuleSet& rs = *set_;
  for (SiteTable& table : rs.site_tables_) {
    for (const std::string& key : table.signature_keys) {
      const auto [cause_view, hint] = SplitSiteSignatureKey(key);
      const std::string cause(cause_view);
      const bool unclassified = cause == "unclassified";
      const std::string sig_id = detail::SiteSignatureId(table.project, key);
      // A key that another part of the project's table named already has its signature.
      if (rs.FindSignature(sig_id) >= 0) continue;
      if (!unclassified && !rs.taxonomy_.empty() &&
          std::find(rs.taxonomy_.begin(), rs.taxonomy_.end(), cause) == rs.taxonomy_.end()) {
        Fault(table.file, 1, "cause outside the taxonomy: '" + cause + "'");
        continue;
      }
      if (!unclassified && !site_remedies_.count(cause)) {
        Fault(table.file, 1, "no remedy for '" + cause + "' in " +
                                  (site_remedies_file_.empty() ? "sites/remedies.toml" : site_remedies_file_));
        continue;
      }
      SignatureRule s;
      s.id = sig_id;
      s.site = true;
      s.hint = hint;
      s.strength = unclassified ? 0.02 : hint ? 0.2 : 0.45;
      s.vocabulary = "sites:" + table.project;
      s.file = table.file;
      s.line = 1;
      AddSignature(std::move(s));
      if (unclassified) continue;
      const std::string cause_id = cause + ".src_" + table.project;
      const int existing = rs.FindCause(cause_id);
      if (existing >= 0) {
        rs.causes_[size_t(existing)].requires_any.push_back(sig_id);
        continue;
      }
      CauseRule c;
      c.id = cause_id;
      c.title = "{site_message}";
      c.remedy = site_remedies_[cause] + " (The message comes from {site_origin}.)";
      c.prior = 0.35;
      c.fingerprint = {"site_origin"};
      c.defers_to = {cause};
      c.from_table = true;
      c.file = table.file;
      c.line = 1;
      c.requires_any.push_back(sig_id);
      CauseRefs refs;
      refs.requires_line = 1;
      AddCause(std::move(c), refs);
    }
  }
}

}  // namespace triage::core
