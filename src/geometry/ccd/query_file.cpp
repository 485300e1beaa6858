// Reading CCD-Query-IO files; the rationals can exceed 64 bits, so they are parsed and rounded with GMP.
#include "percussion/geometry/ccd/query_file.hpp"

#include <gmp.h>

#include <cmath>
#include <fstream>
#include <stdexcept>

#include "percussion/core/error.hpp"

namespace percussion::geometry {
namespace {

// RAII for the few mpz_t this file needs.
struct Mpz {
  mpz_t v;
  Mpz() { mpz_init(v); }
  ~Mpz() { mpz_clear(v); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
};

// An optional sign then decimal digits, nothing else.
bool is_integer(const std::string& s) {
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

void set(Mpz& z, const std::string& s) { mpz_set_str(z.v, s[0] == '+' ? s.c_str() + 1 : s.c_str(), 10); }

// |a| / |b| rounded to 53 bits, to nearest with ties to even (b != 0). Subnormal results may round twice.
double nearest_quotient(const mpz_t a, const mpz_t b) {
  if (mpz_sgn(a) == 0) return 0.0;
  Mpz num, den, q, r;
  mpz_abs(num.v, a);
  mpz_abs(den.v, b);
  // Scale so that the quotient has 54 or 55 bits: at least one bit below the 53 kept, plus the remainder as sticky.
  const long e = static_cast<long>(mpz_sizeinbase(num.v, 2)) - static_cast<long>(mpz_sizeinbase(den.v, 2));
  const long k = 54 - e;
  if (k >= 0) mpz_mul_2exp(num.v, num.v, static_cast<mp_bitcnt_t>(k));
  else mpz_mul_2exp(den.v, den.v, static_cast<mp_bitcnt_t>(-k));
  mpz_tdiv_qr(q.v, r.v, num.v, den.v);
  const bool sticky = mpz_sgn(r.v) != 0;
  const int shift = static_cast<int>(mpz_sizeinbase(q.v, 2)) - 53;
  unsigned long m = mpz_get_ui(q.v);
  const unsigned long low = m & ((1UL << shift) - 1), half = 1UL << (shift - 1);
  m >>= shift;
  if (low > half || (low == half && (sticky || (m & 1)))) ++m;
  return std::ldexp(static_cast<double>(m), static_cast<int>(shift - k));
}

double to_double(const Mpz& num, const Mpz& den) {
  const double v = nearest_quotient(num.v, den.v);
  return mpz_sgn(num.v) * mpz_sgn(den.v) < 0 ? -v : v;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    std::string field = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto first = field.find_first_not_of(" \t\r");
    const auto last = field.find_last_not_of(" \t\r");
    out.push_back(first == std::string::npos ? "" : field.substr(first, last - first + 1));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

double nearest_double(const std::string& num, const std::string& den) {
  if (!is_integer(num) || !is_integer(den)) throw std::invalid_argument("not an integer");
  Mpz n, d;
  set(n, num);
  set(d, den);
  if (mpz_sgn(d.v) == 0) throw std::invalid_argument("zero denominator");
  return to_double(n, d);
}

std::vector<CcdQuery> read_ccd_queries(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read file");
  std::vector<CcdQuery> queries;
  std::string line;
  long number = 0, rows = 0;
  Mpz n, d;
  CcdQuery current;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto bad = [&](const std::string& what) { return InputError(path + ": line " + std::to_string(number) + ": " + what); };
    const std::vector<std::string> f = split(line);
    if (f.size() != 7) throw bad("expected 7 comma-separated integers, got " + std::to_string(f.size()) + " columns");
    for (int c = 0; c < 7; ++c)
      if (!is_integer(f[c])) throw bad("column " + std::to_string(c + 1) + ": not an integer: '" + f[c] + "'");
    const int row = static_cast<int>(rows % 8);
    if (row == 0) current = CcdQuery{}, current.line = number;
    for (int i = 0; i < 3; ++i) {
      set(n, f[2 * i]);
      set(d, f[2 * i + 1]);
      if (mpz_sgn(d.v) == 0) throw bad("column " + std::to_string(2 * i + 2) + ": zero denominator");
      current.x[row][i] = to_double(n, d);
    }
    if (f[6] != "0" && f[6] != "1") throw bad("column 7: ground truth must be 0 or 1, got '" + f[6] + "'");
    const bool truth = f[6] == "1";
    if (row == 0) current.truth = truth;
    else if (truth != current.truth)
      throw bad("ground truth differs from the query's first row (line " + std::to_string(current.line) + ")");
    ++rows;
    if (row == 7) queries.push_back(current);
  }
  if (rows % 8 != 0)
    throw InputError(path + ": line " + std::to_string(number) + ": " + std::to_string(rows) +
                     " rows, not a multiple of 8 (8 rows per query)");
  return queries;
}

}  // namespace percussion::geometry
