#!/bin/sh
# Lands the current worktree's branch on main (developer workflow, not CI):
# rebase on main, build with gcc and clang, run the unit and end-to-end tests,
# then fast-forward main.  Serialised by a lock so concurrent landings queue.
set -e
branch=$(git rev-parse --abbrev-ref HEAD)
[ "$branch" != main ] || { echo "land: run from a feature worktree" >&2; exit 1; }
[ -z "$(git status --porcelain --untracked-files=no)" ] || { echo "land: commit first" >&2; exit 1; }
exec 9>/work/.land.lock
flock 9
git rebase main
make -j2 all >/dev/null
make -j2 BUILD=build-clang CC=clang all >/dev/null
make test-unit test-e2e
main_dir=$(git worktree list --porcelain | awk '/^worktree /{w=$2} /^branch refs\/heads\/main$/{print w}')
git -C "$main_dir" merge --ff-only "$branch"
echo "land: main is now $(git rev-parse --short HEAD)"
