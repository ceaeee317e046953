// Secrets in addresses and connection strings, hidden before anything shows them (errors,
// `config`, `status`, the daemon's log): one function for every place that prints a store's
// address or a webhook's URL.
#pragma once

#include <string>
#include <string_view>

namespace triage {

// `text` with every secret it holds replaced by "***": the password of a URL's user part
// (scheme://user:secret@host), the value of a query parameter or a libpq keyword named for a
// secret (password, sslpassword, passfile, token, access_token, secret, key, api_key, auth,
// signature, sig; in any case), quoted or not. Everything else is kept as it was.
std::string RedactSecrets(std::string_view text);

// Whether `target` is a libpq connection string in its keyword form ("host=db dbname=triage
// user=t password=..."): its first word is `key=` for a key libpq knows.
bool IsLibpqKeywords(std::string_view target);

}  // namespace triage
