#include <ksieve/app/cli.hpp>

int main(int argc, char ** argv)
{
    return ksieve::run_cli(argc, argv);
}
