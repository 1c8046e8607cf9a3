// The extension module ksieve._ksieve: ksieve's errors as the Python exception ksieve.Error (a
// RuntimeError carrying ksieve's message), classify's and build's defaults as constants, and the
// parts registered by sequences.cpp, filter_binding.cpp, build_binding.cpp and files_binding.cpp.
#include "binding.hpp"

#include <ksieve/app/commands.hpp>
#include <ksieve/filters/support/error.hpp>

PYBIND11_MODULE(_ksieve, m)
{
    namespace kp = ksieve::python;
    m.doc() = "ksieve: k-mer filters of reads (the compiled part of the package ksieve).";
    // every subclass of ksieve::error (usage, format, io, input ... errors) becomes ksieve.Error
    auto & e = pybind11::register_local_exception<ksieve::error>(m, "Error", PyExc_RuntimeError);
    e.doc() = "An error of ksieve (a bad file, option or input), with ksieve's message.";
    m.attr("__version__") = KSIEVE_VERSION;
    m.attr("DEFAULT_MIN_HIT_FRACTION") = ksieve::classify_default_fraction;
    m.attr("DEFAULT_MIN_HITS") = ksieve::classify_default_min_hits;
    m.attr("DEFAULT_SAMPLING") = ksieve::build_default_sampling;
    m.attr("DEFAULT_FPR") = ksieve::build_default_sampled_fpr; // of the default sampling
    kp::register_reader(m);
    kp::register_filter(m);
    kp::register_build(m);
    kp::register_files(m);
}
