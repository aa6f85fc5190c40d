// Terminal labels of real kernel names (from the bundled H200 examples):
// what all PyTorch kernels share is dropped, what tells them apart is kept.
#include <gtest/gtest.h>

#include "report/kernel_label.h"

namespace stepscope::report {
namespace {

TEST(KernelLabel, DropsReturnTypeNamespacesAndArguments) {
  std::string name =
      "void at::native::vectorized_elementwise_kernel<8, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, "
      "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
      "at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
      "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)";
  EXPECT_EQ(kernel_label(name, 1000),
            "vectorized_elementwise_kernel<8, AUnaryFunctor<BFloat16, BFloat16, BFloat16, "
            "binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >");
  // Cut to a width, the functor is still visible where the raw name showed
  // only "at::nat...".
  std::string cut = kernel_label(name, 60);
  EXPECT_EQ(cut.size(), 60u);
  EXPECT_EQ(cut.rfind("vectorized_elementwise_kernel<8, AUnaryFunctor<BFloat16", 0), 0u);
}

TEST(KernelLabel, AnonymousNamespaceBeforeTheTemplate) {
  std::string name =
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<c10::BFloat16, "
      "1, 1, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>)";
  EXPECT_EQ(kernel_label(name, 1000),
            "multi_tensor_apply_kernel<TensorListMetadata<1>, BinaryOpScalarFunctor<BFloat16, 1, 1, 0>, "
            "std::multiplies<float>, float>");
}

TEST(KernelLabel, PlainNamesAreUnchanged) {
  EXPECT_EQ(kernel_label("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 60),
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
  EXPECT_EQ(kernel_label("Memset (Device)", 60), "Memset (Device)");
  EXPECT_EQ(kernel_label("Memcpy HtoD (Pageable -> Device)", 60), "Memcpy HtoD (Pageable -> Device)");
}

}  // namespace
}  // namespace stepscope::report
