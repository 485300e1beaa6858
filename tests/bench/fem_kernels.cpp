// Cost of one element's energy, gradient and Hessian (linear elastic, Neo-Hookean, damping) for P1/P2 in 2D/3D:
// nanoseconds per call, averaged over a batch of random elements (scripts/bench/fem_kernels.sh). Not a test.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "../support/fem_test_support.hpp"
#include "percussion/physics/fem/elastic_element.hpp"
#include "percussion/physics/fem/linear_elastic.hpp"
#include "percussion/physics/fem/neo_hookean.hpp"
#include "percussion/physics/fem/viscous_damping.hpp"

namespace fem = percussion::fem;

namespace {

double sink = 0.0;  // keeps the compiler from dropping the work

template <class F>
double ns_per_call(int calls, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) sink += f(i);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / calls;
}

template <int D, int K>
void row(int batch, int repeats) {
  std::mt19937 rng(1);
  std::vector<fem::ElementRest<D, K>> rest;
  std::vector<fem::NodalField<D, K>> u, u_prev;
  for (int i = 0; i < batch; ++i) {
    rest.push_back(*fem::element_rest<D, K>(fem::test::random_vertices<D>(rng)));
    u_prev.push_back(fem::test::random_field<D, K>(rng, 0.05));
    u.push_back(u_prev.back() + fem::test::random_field<D, K>(rng, 0.01));
  }
  const fem::Lame lame = fem::lame_from_young_poisson(1e5, 0.3);
  const fem::LinearElastic le{lame};
  const fem::NeoHookean nh{lame};
  const fem::ViscousDamping vd{0.1, 0.1, 1e-3};
  const int n = batch * repeats;
  const double le_h = ns_per_call(n, [&](int i) { return fem::elastic_hessian(rest[i % batch], u[i % batch], le)(0, 0); });
  const double nh_e = ns_per_call(n, [&](int i) { return fem::elastic_energy(rest[i % batch], u[i % batch], nh); });
  const double nh_g = ns_per_call(n, [&](int i) { return fem::elastic_gradient(rest[i % batch], u[i % batch], nh)(0); });
  const double nh_h = ns_per_call(n, [&](int i) { return fem::elastic_hessian(rest[i % batch], u[i % batch], nh)(0, 0); });
  const double vd_h = ns_per_call(
      n, [&](int i) { return fem::damping_hessian(rest[i % batch], u[i % batch], u_prev[i % batch], vd)(0, 0); });
  std::printf("%dD P%d  %3d dofs %2d points | %9.0f %9.0f %9.0f %9.0f %9.0f\n", D, K, fem::ElementRest<D, K>::kDofs,
              fem::ElementRest<D, K>::kPoints, le_h, nh_e, nh_g, nh_h, vd_h);
}

}  // namespace

int main() {
  std::printf("element       dofs   qp   | ns per call: LE hessian, NH energy, NH gradient, NH hessian, damping hessian\n");
  row<2, 1>(1000, 200);
  row<2, 2>(1000, 50);
  row<3, 1>(1000, 100);
  row<3, 2>(1000, 10);
  return sink == 12345.0;  // never true; uses the sink
}
