"""The demo's command line: both files numbered alike, bad input answered by
a one-line message (argparse's exit status 2), never a traceback."""

import re

import numpy as np
import pytest

from sklearn_ranknet import demo


def _write(path, text):
    path.write_text(text)
    return str(path)


@pytest.fixture
def files(tmp_path):
    # The training file holds feature id 0, the test file does not: read one
    # by one with load_letor's "auto", the test columns would shift by one.
    train = _write(tmp_path / "train.txt", "2 qid:1 0:0.9 1:0.1 2:0.5\n0 qid:1 0:0.1 1:0.8\n1 qid:2 2:0.3\n")
    test = _write(tmp_path / "test.txt", "2 qid:5 1:0.7 2:0.2\n0 qid:5 2:0.4 4:1.5\n")
    return train, test


def _load(argv):
    parser = demo.argparse.ArgumentParser(prog="demo")
    parser.add_argument("train", nargs="?")
    parser.add_argument("test", nargs="?")
    parser.add_argument("--n-features", type=int)
    parser.add_argument("--zero-based", action="store_true")
    return demo._load(parser.parse_args(argv), parser)


def test_both_files_are_numbered_alike_and_as_wide(files):
    _, (X_train, _, _, X_test, _, _) = _load([*files, "--zero-based"])
    assert X_train.shape == (3, 5) and X_test.shape == (2, 5)
    np.testing.assert_array_equal(X_test.toarray(), [[0, 0.7, 0.2, 0, 0], [0, 0, 0.4, 0, 1.5]])
    np.testing.assert_array_equal(X_train.toarray()[:, 3:], 0)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["{train}", "{test}"], "feature ids start at 0: pass --zero-based"),
        (["{train}"], "give both a training and a test file"),
        (["/nonexistent/train.txt", "{test}"], "cannot read /nonexistent/train.txt"),
        (["{train}", "{test}", "--zero-based", "--n-features", "2"], "cannot read .*more than --n-features 2; pass --n-features 3 or more"),
    ],
)
def test_bad_input_is_one_line_not_a_traceback(files, capsys, argv, message):
    argv = [a.format(train=files[0], test=files[1]) for a in argv]
    with pytest.raises(SystemExit) as exit_:
        _load(argv)
    assert exit_.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_main_refuses_a_feature_count_below_one(files, capsys):
    with pytest.raises(SystemExit):
        demo.main([*files, "--n-features", "0"])
    assert "--n-features must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    "row, message",
    [
        ("-1 qid:5 1:0.7", r"test\.txt holds negative relevance labels \(smallest -1\)"),
        ("31 qid:5 1:0.7", r"test\.txt holds labels up to 31, .* at most 30\. Rescale them"),
        ("nan qid:5 1:0.7", r"test\.txt: a label is NaN or infinite"),
        ("1 qid:5 1:nan", r"test\.txt: a feature value is NaN or infinite"),
    ],
)
def test_bad_values_in_a_file_are_usage_errors(files, tmp_path, capsys, row, message):
    # Found when the file is read, not as a traceback once training (or
    # scoring, after a model has been fitted) runs into them.
    test = _write(tmp_path / "test.txt", f"2 qid:5 1:0.7 2:0.2\n{row}\n")
    with pytest.raises(SystemExit) as exit_:
        demo.main([files[0], test, "--zero-based"])
    assert exit_.value.code == 2
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize("seed, message", [("-1", r"must be in \[0, 2\*\*32\); got -1"),
                                           ("x", "must be an integer; got 'x'")])
def test_a_bad_seed_is_a_usage_error(seed, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        demo.main(["--seed", seed])
    assert exit_.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_file_without_query_ids_gets_advice_for_the_command_line(tmp_path, capsys):
    train = _write(tmp_path / "train.txt", "1 1:0.5\n0 1:0.2\n")
    with pytest.raises(SystemExit):
        _load([train, train])
    err = capsys.readouterr().err
    assert "give every row a qid: field, or the query sizes in that file" in err
    assert "query_path=" not in err


@pytest.mark.parametrize("role", ["train", "test"])
@pytest.mark.parametrize("rows", ["1 qid:1 1:0.5\n0 qid:2 1:0.2\n",          # one row per query
                                  "0 qid:1 1:0.5\n0 qid:1 1:0.2\n0 qid:2 1:0.1\n"])  # labels all equal
def test_a_file_with_nothing_to_rank_is_a_usage_error(files, tmp_path, capsys, role, rows):
    # Trained on, the rankers learned nothing (a warning each); tested on,
    # every model printed 1.0000 (with two warnings per model for single rows).
    flat = _write(tmp_path / "flat.txt", rows)
    train, test = (flat, files[1]) if role == "train" else (files[0], flat)
    with pytest.raises(SystemExit) as exit_:
        demo.main([train, test, "--zero-based"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert re.search(r"flat\.txt: no query holds two documents of different labels", err)
    assert ("nothing to learn" in err) == (role == "train")


def test_running_out_of_memory_is_a_usage_error_naming_the_width(files, monkeypatch, capsys):
    # A mistyped --n-features (10**9) made the baseline densify X or the
    # rankers allocate a weight per feature: a MemoryError traceback.
    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 7.45 GiB")

    monkeypatch.setattr(demo.Ridge, "fit", no_memory)
    with pytest.raises(SystemExit) as exit_:
        demo.main([*files, "--zero-based", "--n-features", "7"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert re.search(r"Ridge on labels \(pointwise\) ran out of memory on 3 rows of 7 features "
                     r"\(the width set by --n-features\)", err)


@pytest.mark.parametrize("zero_based, last_id", [(True, 4), (False, 5)])
def test_a_too_small_feature_count_names_the_option(files, tmp_path, capsys, zero_based, last_id):
    # Was scikit-learn's "n_features was set to 2, but input file contains
    # 5 features": the library's parameter, not the command line's option.
    test = files[1] if zero_based else _write(tmp_path / "test1.txt", "2 qid:5 1:0.7 2:0.2\n0 qid:5 2:0.4 5:1.5\n")
    argv = [test, test, "--n-features", "2"] + (["--zero-based"] if zero_based else [])
    with pytest.raises(SystemExit) as exit_:
        demo.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert (f"it holds 5 features (feature ids up to {last_id}), more than --n-features 2; "
            "pass --n-features 5 or more.") in err
    assert "n_features was set" not in err
